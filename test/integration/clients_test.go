package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	schedulerac "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/generated/informers/externalversions"
	"opsnorth.io/scheduler/pkg/testenv"
)

// clientsNamespace holds the objects of the generated-client tests.
const clientsNamespace = "it-clients"

// Field managers of the server-side apply tests.
const (
	specManager   = "clients-test"
	statusManager = "clients-test-status"
)

// object is a typed scheduler object.
type object interface {
	runtime.Object
	metav1.Object
}

// typedClient is what the generated clientset offers for every kind; each
// generated XInterface satisfies it.
type typedClient[T object, L runtime.Object, A any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Apply(ctx context.Context, obj A, opts metav1.ApplyOptions) (T, error)
	ApplyStatus(ctx context.Context, obj A, opts metav1.ApplyOptions) (T, error)
}

// kindFixture tells the generic client tests how to handle one kind.
type kindFixture[T object, L runtime.Object, A any] struct {
	client func(cs versioned.Interface, ns string) typedClient[T, L, A]
	// lister registers the kind's informer in f and returns its lister's Get.
	lister func(f externalversions.SharedInformerFactory, ns string) func(name string) (T, error)
	// names lists the names of a List's items.
	names func(L) []string

	newObject   func(ns, name string) T
	spec        func(T) any
	setStatus   func(T)
	checkStatus func(*testing.T, T)

	applySpec          func(ns, name string) A
	checkAppliedSpec   func(*testing.T, T)
	applyStatus        func(ns, name string) A
	checkAppliedStatus func(*testing.T, T)
}

func condition(typ, reason string) metav1.Condition {
	return metav1.Condition{
		Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: "set by the client test",
		ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)),
	}
}

func conditionApply(typ, reason string) *metav1ac.ConditionApplyConfiguration {
	return metav1ac.Condition().WithType(typ).WithStatus(metav1.ConditionTrue).WithReason(reason).
		WithMessage("applied by the client test").WithObservedGeneration(1).WithLastTransitionTime(metav1.Now())
}

var agentTaskFixture = kindFixture[*agentTask, *schedulerv1alpha1.AgentTaskList, *schedulerac.AgentTaskApplyConfiguration]{
	client: func(cs versioned.Interface, ns string) typedClient[*agentTask, *schedulerv1alpha1.AgentTaskList, *schedulerac.AgentTaskApplyConfiguration] {
		return cs.SchedulerV1alpha1().AgentTasks(ns)
	},
	lister: func(f externalversions.SharedInformerFactory, ns string) func(string) (*agentTask, error) {
		return f.Scheduler().V1alpha1().AgentTasks().Lister().AgentTasks(ns).Get
	},
	names: func(l *schedulerv1alpha1.AgentTaskList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: validAgentTask,
	spec:      func(a *agentTask) any { return a.Spec },
	setStatus: func(a *agentTask) {
		a.Status.Phase = schedulerv1alpha1.TaskRunning
		a.Status.JobName = a.Name
		a.Status.ObservedGeneration = 1
		a.Status.Conditions = []metav1.Condition{condition(schedulerv1alpha1.ConditionReconciling, "JobRunning")}
	},
	checkStatus: func(t *testing.T, a *agentTask) {
		assert.Equal(t, schedulerv1alpha1.TaskRunning, a.Status.Phase)
		assert.Equal(t, a.Name, a.Status.JobName)
		require.Len(t, a.Status.Conditions, 1)
		assert.Equal(t, "JobRunning", a.Status.Conditions[0].Reason)
	},
	applySpec: func(ns, name string) *schedulerac.AgentTaskApplyConfiguration {
		return schedulerac.AgentTask(name, ns).WithSpec(schedulerac.AgentTaskSpec().
			WithTaskID("apply-0001").WithUserID("alice").WithImage("ghcr.io/opsnorth/agents/echo:1.0.0").
			WithInput(map[string]string{"PROMPT": "hello"}).WithTimeoutSeconds(300).
			WithResources(schedulerac.ResourceRequirements().
				WithRequests(schedulerac.ResourceAmounts().WithCPU(resource.MustParse("100m"))).
				WithLimits(schedulerac.ResourceAmounts().WithCPU(resource.MustParse("1")))))
	},
	checkAppliedSpec: func(t *testing.T, a *agentTask) {
		assert.Equal(t, "apply-0001", a.Spec.TaskID)
		assert.Equal(t, map[string]string{"PROMPT": "hello"}, a.Spec.Input)
		assert.Equal(t, ptr.To[int64](300), a.Spec.TimeoutSeconds)
		require.NotNil(t, a.Spec.Resources)
		assert.Equal(t, "100m", a.Spec.Resources.Requests.CPU.String())
	},
	applyStatus: func(ns, name string) *schedulerac.AgentTaskApplyConfiguration {
		return schedulerac.AgentTask(name, ns).WithStatus(schedulerac.AgentTaskStatus().
			WithPhase(schedulerv1alpha1.TaskSucceeded).WithExitCode(0).WithReason("Completed").
			WithOutput(map[string]string{"result": "ok"}).
			WithConditions(conditionApply(schedulerv1alpha1.ConditionReady, "Succeeded")))
	},
	checkAppliedStatus: func(t *testing.T, a *agentTask) {
		assert.Equal(t, schedulerv1alpha1.TaskSucceeded, a.Status.Phase)
		assert.Equal(t, ptr.To[int32](0), a.Status.ExitCode)
		assert.Equal(t, map[string]string{"result": "ok"}, a.Status.Output)
	},
}

var workflowFixture = kindFixture[*workflow, *schedulerv1alpha1.WorkflowList, *schedulerac.WorkflowApplyConfiguration]{
	client: func(cs versioned.Interface, ns string) typedClient[*workflow, *schedulerv1alpha1.WorkflowList, *schedulerac.WorkflowApplyConfiguration] {
		return cs.SchedulerV1alpha1().Workflows(ns)
	},
	lister: func(f externalversions.SharedInformerFactory, ns string) func(string) (*workflow, error) {
		return f.Scheduler().V1alpha1().Workflows().Lister().Workflows(ns).Get
	},
	names: func(l *schedulerv1alpha1.WorkflowList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: validWorkflow,
	spec:      func(w *workflow) any { return w.Spec },
	setStatus: func(w *workflow) {
		w.Status.Phase = schedulerv1alpha1.WorkflowRunning
		w.Status.CurrentStep = 1
		w.Status.StepStatuses = []schedulerv1alpha1.StepStatus{
			{Name: "fetch", Phase: schedulerv1alpha1.StepSucceeded, Attempts: 1, Output: map[string]string{"path": "/work/src"}},
			{Name: "analyze", Phase: schedulerv1alpha1.StepRunning, Attempts: 1, TaskName: w.Name + "-analyze"},
		}
	},
	checkStatus: func(t *testing.T, w *workflow) {
		assert.Equal(t, schedulerv1alpha1.WorkflowRunning, w.Status.Phase)
		assert.Equal(t, int32(1), w.Status.CurrentStep)
		require.Len(t, w.Status.StepStatuses, 2)
		assert.Equal(t, map[string]string{"path": "/work/src"}, w.Status.StepStatuses[0].Output)
		assert.Equal(t, schedulerv1alpha1.StepRunning, w.Status.StepStatuses[1].Phase)
	},
	applySpec: func(ns, name string) *schedulerac.WorkflowApplyConfiguration {
		return schedulerac.Workflow(name, ns).WithSpec(schedulerac.WorkflowSpec().
			WithUserID("alice").WithInput(map[string]string{"TOPIC": "testing"}).
			WithSteps(
				schedulerac.WorkflowStep().WithName("research").WithImage("ghcr.io/opsnorth/agents/research:1.1.0").
					WithInput(map[string]string{"QUERY": "${inputs.TOPIC}"}),
				schedulerac.WorkflowStep().WithName("write").WithImage("ghcr.io/opsnorth/agents/write:1.1.0").
					WithDependsOn("research").WithRetries(schedulerac.RetryPolicy().WithLimit(3)),
			))
	},
	checkAppliedSpec: func(t *testing.T, w *workflow) {
		require.Len(t, w.Spec.Steps, 2)
		assert.Equal(t, "${inputs.TOPIC}", w.Spec.Steps[0].Input["QUERY"])
		assert.Equal(t, []string{"research"}, w.Spec.Steps[1].DependsOn)
		assert.Equal(t, &schedulerv1alpha1.RetryPolicy{Limit: 3, BackoffSeconds: ptr.To[int32](5), MaxBackoffSeconds: ptr.To[int32](300)},
			w.Spec.Steps[1].Retries, "retries with their defaults")
	},
	applyStatus: func(ns, name string) *schedulerac.WorkflowApplyConfiguration {
		return schedulerac.Workflow(name, ns).WithStatus(schedulerac.WorkflowStatus().
			WithPhase(schedulerv1alpha1.WorkflowSucceeded).WithCurrentStep(2).WithDuration("1m30s").
			WithStepStatuses(
				schedulerac.StepStatus().WithName("research").WithPhase(schedulerv1alpha1.StepSucceeded),
				schedulerac.StepStatus().WithName("write").WithPhase(schedulerv1alpha1.StepSucceeded),
			).
			WithWebhook(schedulerac.WebhookDelivery().WithAttempts(1).WithDelivered(true).WithLastStatusCode(204)))
	},
	checkAppliedStatus: func(t *testing.T, w *workflow) {
		assert.Equal(t, schedulerv1alpha1.WorkflowSucceeded, w.Status.Phase)
		assert.Equal(t, "1m30s", w.Status.Duration)
		assert.Len(t, w.Status.StepStatuses, 2)
		require.NotNil(t, w.Status.Webhook)
		assert.True(t, w.Status.Webhook.Delivered)
		assert.Equal(t, int32(204), w.Status.Webhook.LastStatusCode)
	},
}

var userDeploymentFixture = kindFixture[*userDeployment, *schedulerv1alpha1.UserDeploymentList, *schedulerac.UserDeploymentApplyConfiguration]{
	client: func(cs versioned.Interface, ns string) typedClient[*userDeployment, *schedulerv1alpha1.UserDeploymentList, *schedulerac.UserDeploymentApplyConfiguration] {
		return cs.SchedulerV1alpha1().UserDeployments(ns)
	},
	lister: func(f externalversions.SharedInformerFactory, ns string) func(string) (*userDeployment, error) {
		return f.Scheduler().V1alpha1().UserDeployments().Lister().UserDeployments(ns).Get
	},
	names: func(l *schedulerv1alpha1.UserDeploymentList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: validUserDeployment,
	spec:      func(u *userDeployment) any { return u.Spec },
	setStatus: func(u *userDeployment) {
		u.Status.Phase = schedulerv1alpha1.PhaseProvisioning
		u.Status.Namespace = "user-" + u.Spec.UserID
		u.Status.Conditions = []metav1.Condition{condition(schedulerv1alpha1.ConditionReconciling, "Provisioning")}
	},
	checkStatus: func(t *testing.T, u *userDeployment) {
		assert.Equal(t, schedulerv1alpha1.PhaseProvisioning, u.Status.Phase)
		assert.Equal(t, "user-alice", u.Status.Namespace)
		require.Len(t, u.Status.Conditions, 1)
		assert.Equal(t, "Provisioning", u.Status.Conditions[0].Reason)
	},
	applySpec: func(ns, name string) *schedulerac.UserDeploymentApplyConfiguration {
		return schedulerac.UserDeployment(name, ns).WithSpec(schedulerac.UserDeploymentSpec().
			WithUserID("carol").WithImage("ghcr.io/opsnorth/hello:2.0.1").WithContainerPort(8080).
			WithConfigData(schedulerv1alpha1.EnvMap{"GREETING": "hi"}).
			WithAutoscaling(schedulerac.Autoscaling().WithMinReplicas(1).WithMaxReplicas(4)))
	},
	checkAppliedSpec: func(t *testing.T, u *userDeployment) {
		assert.Equal(t, "carol", u.Spec.UserID)
		assert.Equal(t, ptr.To[int32](8080), u.Spec.ContainerPort)
		assert.Equal(t, schedulerv1alpha1.EnvMap{"GREETING": "hi"}, u.Spec.ConfigData)
		assert.Equal(t, schedulerv1alpha1.DesiredRunning, u.Spec.DesiredState, "default")
		assert.Equal(t, schedulerv1alpha1.VisibilityPublic, u.Spec.Visibility, "default")
		assert.Equal(t, "free", u.Spec.Tier, "default")
		require.NotNil(t, u.Spec.Autoscaling)
		assert.Equal(t, int32(80), u.Spec.Autoscaling.TargetCPUUtilizationPercentage, "default")
	},
	applyStatus: func(ns, name string) *schedulerac.UserDeploymentApplyConfiguration {
		return schedulerac.UserDeployment(name, ns).WithStatus(schedulerac.UserDeploymentStatus().
			WithPhase(schedulerv1alpha1.PhaseReady).WithReadyReplicas(2).WithNamespace("user-carol").
			WithIngresses(schedulerac.IngressStatus().WithService("main").WithHost(name + ".apps.example.com").
				WithURL("https://" + name + ".apps.example.com").WithVisibility(schedulerv1alpha1.VisibilityPublic)).
			WithConditions(conditionApply(schedulerv1alpha1.ConditionReady, "Ready")))
	},
	checkAppliedStatus: func(t *testing.T, u *userDeployment) {
		assert.Equal(t, schedulerv1alpha1.PhaseReady, u.Status.Phase)
		assert.Equal(t, int32(2), u.Status.ReadyReplicas)
		require.Len(t, u.Status.Ingresses, 1)
		assert.Equal(t, "https://"+u.Name+".apps.example.com", u.Status.Ingresses[0].URL)
	},
}

var deploymentTemplateFixture = kindFixture[*deploymentTemplate, *schedulerv1alpha1.DeploymentTemplateList, *schedulerac.DeploymentTemplateApplyConfiguration]{
	client: func(cs versioned.Interface, _ string) typedClient[*deploymentTemplate, *schedulerv1alpha1.DeploymentTemplateList, *schedulerac.DeploymentTemplateApplyConfiguration] {
		return cs.SchedulerV1alpha1().DeploymentTemplates()
	},
	lister: func(f externalversions.SharedInformerFactory, _ string) func(string) (*deploymentTemplate, error) {
		return f.Scheduler().V1alpha1().DeploymentTemplates().Lister().Get
	},
	names: func(l *schedulerv1alpha1.DeploymentTemplateList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: func(_, name string) *deploymentTemplate { return validDeploymentTemplate(name) },
	spec:      func(d *deploymentTemplate) any { return d.Spec },
	setStatus: func(d *deploymentTemplate) {
		d.Status.ObservedGeneration = 1
		d.Status.Conditions = []metav1.Condition{condition(schedulerv1alpha1.ConditionReady, "Valid")}
	},
	checkStatus: func(t *testing.T, d *deploymentTemplate) {
		assert.Equal(t, int64(1), d.Status.ObservedGeneration)
		require.Len(t, d.Status.Conditions, 1)
		assert.Equal(t, "Valid", d.Status.Conditions[0].Reason)
	},
	applySpec: func(_, name string) *schedulerac.DeploymentTemplateApplyConfiguration {
		return schedulerac.DeploymentTemplate(name).WithSpec(schedulerac.DeploymentTemplateSpec().
			WithDescription("applied").
			WithServices(schedulerac.TemplateService().WithName("site").WithImage("nginxinc/nginx-unprivileged:1.27-alpine").
				WithPorts(schedulerac.ServicePort().WithName("http").WithPort(8080)).WithExpose("http")))
	},
	checkAppliedSpec: func(t *testing.T, d *deploymentTemplate) {
		assert.Equal(t, "applied", d.Spec.Description)
		require.Len(t, d.Spec.Services, 1)
		s := d.Spec.Services[0]
		assert.Equal(t, "http", s.Expose)
		assert.Equal(t, schedulerv1alpha1.ServiceType("ClusterIP"), s.ServiceType, "default")
		assert.Equal(t, ptr.To[int32](1), s.Replicas, "default")
		require.Len(t, s.Ports, 1)
		assert.Equal(t, "TCP", string(s.Ports[0].Protocol), "default")
	},
	applyStatus: func(_, name string) *schedulerac.DeploymentTemplateApplyConfiguration {
		return schedulerac.DeploymentTemplate(name).WithStatus(schedulerac.DeploymentTemplateStatus().
			WithObservedGeneration(1).WithConditions(conditionApply(schedulerv1alpha1.ConditionReady, "Applied")))
	},
	checkAppliedStatus: func(t *testing.T, d *deploymentTemplate) {
		require.Len(t, d.Status.Conditions, 1)
		assert.Equal(t, "Applied", d.Status.Conditions[0].Reason)
	},
}

// TestGeneratedClients drives every kind through the generated clientset,
// applyconfigurations, informers, listers and watch.
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
