package fallback_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// The package's control plane has only the scheduler CRDs: a cluster without
// Traefik, External Secrets or prometheus-operator.
func TestMain(m *testing.M) { testenv.RunMain(m, testenv.WithoutThirdPartyCRDs()) }

const wait = 60 * time.Second

// domain is the deployment domain the manager runs with.
const domain = "apps.example.com"

// requireNoOptionalGroups fails unless discovery serves none of the optional
// third-party groups.
func requireNoOptionalGroups(t *testing.T, env *testenv.Env) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	for _, gv := range []string{"traefik.io/v1alpha1", "external-secrets.io/v1", "monitoring.coreos.com/v1"} {
		_, err := dc.ServerResourcesForGroupVersion(gv)
		require.Truef(t, apierrors.IsNotFound(err), "%s is served (err %v)", gv, err)
	}
}

func TestWithoutOptionalCRDs(t *testing.T) {
	env := testenv.Require(t)
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	ctx := context.Background()
	requireNoOptionalGroups(t, env)

	ns := "apps-" + rand.String(6)
	require.NoError(t, c.Create(ctx, testkit.MakeBackendNamespace(ns, "")))
	testkit.StartManager(t, env.Config, deployments.NewComponent(), "--deployment-domain="+domain, "--watch-namespace="+ns)
	user := "kim-" + rand.String(5)
	userNS := "user-" + user
	newUD := func(name string, vis v1alpha1.Visibility) *v1alpha1.UserDeployment {
		return &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.UserDeploymentSpec{UserID: user, Image: "ghcr.io/opsnorth/hello:2",
				ContainerPort: ptr.To[int32](8080), Visibility: vis}}
	}
	require.NoError(t, c.Create(ctx, newUD("pub", v1alpha1.VisibilityPublic)))
	require.NoError(t, c.Create(ctx, newUD("priv", v1alpha1.VisibilityInternal)))
	withSecret := newUD("secret", v1alpha1.VisibilityPublic)
	withSecret.Spec.Secrets = []v1alpha1.SecretReference{{Name: "TOKEN", RemoteRef: v1alpha1.RemoteSecretReference{Key: "k"}}}
	require.NoError(t, c.Create(ctx, withSecret))

	for name, want := range map[string][2]string{
		"pub":  {"public", "pub." + domain},
		"priv": {"internal", "priv.int." + domain},
	} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(render.GVKIngress)
		require.Eventually(t, func() bool {
			return c.Get(ctx, client.ObjectKey{Namespace: userNS, Name: name + "-app"}, u) == nil
		}, wait, 200*time.Millisecond, "Ingress %s-app", name)
		class, _, _ := unstructured.NestedString(u.Object, "spec", "ingressClassName")
		assert.Equal(t, want[0], class)
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
		require.Len(t, rules, 1)
		assert.Equal(t, want[1], rules[0].(map[string]any)["host"])
		tls, _, _ := unstructured.NestedSlice(u.Object, "spec", "tls")
		assert.Equal(t, []any{want[1]}, tls[0].(map[string]any)["hosts"])
	}

	var got v1alpha1.UserDeployment
	require.Eventually(t, func() bool {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "secret"}, &got) == nil && got.Status.Phase == v1alpha1.PhaseError
	}, wait, 200*time.Millisecond)
	assert.Equal(t, render.ErrNoExternalSecrets.Error(), got.Status.LastError)

	// Deleting works without the CRDs: their kinds' lists answer "no match",
	// which counts as nothing to delete or await.
	for _, name := range []string{"pub", "priv", "secret"} {
		var ud v1alpha1.UserDeployment
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &ud))
		require.NoError(t, c.Delete(ctx, &ud))
	}
	require.Eventually(t, func() bool {
		var list v1alpha1.UserDeploymentList
		return c.List(ctx, &list, client.InNamespace(ns)) == nil && len(list.Items) == 0
	}, wait, 200*time.Millisecond)
	for _, gvk := range []schema.GroupVersionKind{render.GVKConfigMap, render.GVKService, render.GVKDeployment,
		render.GVKIngress, render.GVKNetworkPolicy, render.GVKResourceQuota, render.GVKLimitRange} {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		require.NoError(t, c.List(ctx, &list, client.InNamespace(userNS), client.MatchingLabels{labelkeys.User: user}))
		assert.Empty(t, list.Items, gvk.Kind)
	}
}
