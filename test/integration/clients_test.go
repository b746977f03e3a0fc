package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/generated/informers/externalversions"
	"opsnorth.io/scheduler/pkg/testenv"
)

func TestGeneratedClients(t *testing.T) {
	env := testenv.Require(t)
	cs := newSchedulerClient(t, env.Config)
	ensureNamespace(t, env.Config, clientsNamespace)

	tests := []struct {
		kind string
		run  func(t *testing.T, cs versioned.Interface)
	}{
		{kind: kindAgentTask, run: clientTests(agentTaskFixture)},
		{kind: kindWorkflow, run: clientTests(workflowFixture)},
		{kind: kindUserDeployment, run: clientTests(userDeploymentFixture)},
		{kind: kindDeploymentTemplate, run: clientTests(deploymentTemplateFixture)},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) { tt.run(t, cs) })
	}
}

// clientTests returns the client tests of one kind.
func clientTests[T object, L runtime.Object, A any](fx kindFixture[T, L, A]) func(*testing.T, versioned.Interface) {
	return func(t *testing.T, cs versioned.Interface) {
		t.Run("crud", func(t *testing.T) { testCRUD(t, cs, fx) })
		t.Run("apply", func(t *testing.T) { testApply(t, cs, fx) })
		t.Run("informer", func(t *testing.T) { testInformer(t, cs, fx) })
		t.Run("watch", func(t *testing.T) { testWatch(t, cs, fx) })
	}
}

// cleanupTyped deletes name when the test ends; NotFound is fine.
func cleanupTyped[T object, L runtime.Object, A any](t *testing.T, c typedClient[T, L, A], name string) {
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean up %s: %v", name, err)
		}
	})
}

// requireGone waits until name is deleted.
func requireGone[T object, L runtime.Object, A any](t *testing.T, c typedClient[T, L, A], name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := c.Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 10*time.Second, 50*time.Millisecond, "%s is still there after delete", name)
}

func testCRUD[T object, L runtime.Object, A any](t *testing.T, cs versioned.Interface, fx kindFixture[T, L, A]) {
	ctx := t.Context()
	c := fx.client(cs, clientsNamespace)
	obj := fx.newObject(clientsNamespace, uniqueName("crud"))
	name := obj.GetName()

	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	cleanupTyped(t, c, name)
	assert.Equal(t, fx.spec(obj), fx.spec(created))
	assert.NotEmpty(t, created.GetUID())
	assert.Equal(t, int64(1), created.GetGeneration())

	got, err := c.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.GetResourceVersion(), got.GetResourceVersion())
	assert.Equal(t, fx.spec(obj), fx.spec(got))

	list, err := c.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Contains(t, fx.names(list), name)

	got.SetLabels(map[string]string{"stage": "updated"})
	updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "updated", updated.GetLabels()["stage"])
	assert.Equal(t, int64(1), updated.GetGeneration(), "a metadata change keeps the generation")

	fx.setStatus(updated)
	withStatus, err := c.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	require.NoError(t, err)
	fx.checkStatus(t, withStatus)
	got, err = c.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	fx.checkStatus(t, got)
	assert.Equal(t, fx.spec(obj), fx.spec(got), "a status update keeps the spec")
	assert.Equal(t, int64(1), got.GetGeneration(), "a status update keeps the generation")

	require.NoError(t, c.Delete(ctx, name, metav1.DeleteOptions{}))
	requireGone(t, c, name)
}

func testApply[T object, L runtime.Object, A any](t *testing.T, cs versioned.Interface, fx kindFixture[T, L, A]) {
	ctx := t.Context()
	c := fx.client(cs, clientsNamespace)
	name := uniqueName("apply")
	specOpts := metav1.ApplyOptions{FieldManager: specManager}

	applied, err := c.Apply(ctx, fx.applySpec(clientsNamespace, name), specOpts)
	require.NoError(t, err, "apply creates the object")
	cleanupTyped(t, c, name)
	fx.checkAppliedSpec(t, applied)

	withStatus, err := c.ApplyStatus(ctx, fx.applyStatus(clientsNamespace, name), metav1.ApplyOptions{FieldManager: statusManager})
	require.NoError(t, err)
	fx.checkAppliedStatus(t, withStatus)
	fx.checkAppliedSpec(t, withStatus)

	owners := map[string]string{}
	for _, mf := range withStatus.GetManagedFields() {
		assert.Equal(t, metav1.ManagedFieldsOperationApply, mf.Operation, "manager %s", mf.Manager)
		owners[mf.Manager] = mf.Subresource
	}
	assert.Equal(t, map[string]string{specManager: "", statusManager: "status"}, owners, "field managers and their subresources")

	again, err := c.Apply(ctx, fx.applySpec(clientsNamespace, name), specOpts)
	require.NoError(t, err)
	assert.Equal(t, withStatus.GetResourceVersion(), again.GetResourceVersion(), "re-applying the same configuration is a no-op")
	fx.checkAppliedStatus(t, again)

	require.NoError(t, c.Delete(ctx, name, metav1.DeleteOptions{}))
	requireGone(t, c, name)
}

func testInformer[T object, L runtime.Object, A any](t *testing.T, cs versioned.Interface, fx kindFixture[T, L, A]) {
	ctx, cancel := context.WithCancel(t.Context())
	factory := externalversions.NewSharedInformerFactoryWithOptions(cs, 0, externalversions.WithNamespace(clientsNamespace))
	get := fx.lister(factory, clientsNamespace)
	factory.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	for typ, synced := range factory.WaitForCacheSync(ctx.Done()) {
		require.True(t, synced, "informer of %v synced", typ)
	}

	c := fx.client(cs, clientsNamespace)
	obj := fx.newObject(clientsNamespace, uniqueName("informer"))
	name := obj.GetName()
	_, err := get(name)
	require.True(t, apierrors.IsNotFound(err), "not in the cache before it is created: %v", err)

	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	cleanupTyped(t, c, name)
	require.Eventually(t, func() bool {
		cached, err := get(name)
		return err == nil && cached.GetUID() == created.GetUID()
	}, 10*time.Second, 20*time.Millisecond, "the lister sees the new object")

	created.SetLabels(map[string]string{"stage": "updated"})
	updated, err := c.Update(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		cached, err := get(name)
		return err == nil && cached.GetResourceVersion() == updated.GetResourceVersion() && cached.GetLabels()["stage"] == "updated"
	}, 10*time.Second, 20*time.Millisecond, "the lister sees the update")

	require.NoError(t, c.Delete(ctx, name, metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := get(name)
		return apierrors.IsNotFound(err)
	}, 10*time.Second, 20*time.Millisecond, "the lister drops the deleted object")
}

func testWatch[T object, L runtime.Object, A any](t *testing.T, cs versioned.Interface, fx kindFixture[T, L, A]) {
	ctx := t.Context()
	c := fx.client(cs, clientsNamespace)
	obj := fx.newObject(clientsNamespace, uniqueName("watch"))
	name := obj.GetName()

	w, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	require.NoError(t, err)
	defer w.Stop()

	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	cleanupTyped(t, c, name)
	created.SetLabels(map[string]string{"stage": "updated"})
	_, err = c.Update(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, c.Delete(ctx, name, metav1.DeleteOptions{}))

	// Another test's controller may add events of its own (a finalizer, a
	// status); ours must come in order: ADDED, MODIFIED with the label, DELETED.
	var seen []watch.EventType
	timeout := time.After(10 * time.Second)
	for len(seen) == 0 || seen[len(seen)-1] != watch.Deleted {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "watch closed early after %v", seen)
			require.NotEqual(t, watch.Error, ev.Type, "watch error: %v", ev.Object)
			got, ok := ev.Object.(T)
			require.Truef(t, ok, "event object is %T", ev.Object)
			require.Equal(t, name, got.GetName())
			if ev.Type == watch.Modified && got.GetLabels()["stage"] != "updated" {
				continue
			}
			seen = append(seen, ev.Type)
		case <-timeout:
			require.Failf(t, "timed out", "events so far: %v", seen)
		}
	}
	assert.Equal(t, []watch.EventType{watch.Added, watch.Modified, watch.Deleted}, dedupe(seen))
}

// dedupe drops repeated event types in a row (a controller's update after ours
// is also MODIFIED and carries our label).
func dedupe(events []watch.EventType) []watch.EventType {
	var out []watch.EventType
	for _, e := range events {
		if len(out) == 0 || out[len(out)-1] != e {
			out = append(out, e)
		}
	}
	return out
}
