package deployments_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

func rawUD(ns, name, user string) *v1alpha1.UserDeployment {
	return &v1alpha1.UserDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1alpha1.UserDeploymentSpec{UserID: user, Image: "ghcr.io/opsnorth/hello:2", ContainerPort: ptr.To[int32](8080)},
	}
}

func TestRawImageAutoscalingAndCRDeletion(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)
	user := userID("bob")
	userNS := "user-" + user

	hello := rawUD(ns, "hello", user)
	hello.Spec.Visibility = v1alpha1.VisibilityInternal
	require.NoError(t, c.Create(ctx, hello))
	scaled := rawUD(ns, "scaled", user)
	scaled.Spec.Autoscaling = &v1alpha1.Autoscaling{MinReplicas: 1, MaxReplicas: 2}
	require.NoError(t, c.Create(ctx, scaled))

	d := waitObject(t, c, render.GVKDeployment, userNS, "hello-app", nil)
	assert.Equal(t, int64(1), nested(d, "spec", "replicas"))
	ports := nested(d, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["ports"]
	assert.Equal(t, int64(8080), ports.([]any)[0].(map[string]any)["containerPort"])
	ir := waitObject(t, c, render.GVKIngressRoute, userNS, "hello-app", nil)
	assert.Equal(t, "Host(`hello.int."+domain+"`)", nested(ir, "spec", "routes").([]any)[0].(map[string]any)["match"])
	assert.Equal(t, "internal", ir.GetAnnotations()["kubernetes.io/ingress.class"])

	hpa := waitObject(t, c, render.GVKHPA, userNS, "scaled-app", nil)
	assert.Equal(t, int64(2), nested(hpa, "spec", "maxReplicas"))
	sd := waitObject(t, c, render.GVKDeployment, userNS, "scaled-app", nil)
	assert.Equal(t, int64(1), nested(sd, "spec", "replicas"), "defaulted by the apiserver, not set by the manager")
	assert.NotContains(t, sd.GetManagedFields()[0].FieldsV1.String(), `"f:replicas"`)

	markReady(t, c, userNS, ns+".hello")
	got := waitPhase(t, c, ns, "hello", v1alpha1.PhaseReady)
	assert.Equal(t, "https://hello.int."+domain, got.Status.Ingresses[0].URL)

	// Deleting one of the user's deployments keeps the shared namespace.
	deleteUD(t, c, ns, "hello")
	for _, obj := range managedObjects(t, c, user) {
		assert.NotContains(t, obj, "hello-", "children of the deleted deployment are gone")
	}
	nsObj, err := getU(t, c, render.GVKNamespace, "", userNS)
	require.NoError(t, err)
	assert.Nil(t, nsObj.GetDeletionTimestamp(), "another deployment of the user still lives there")

	// The last one takes the namespace with it.
	deleteUD(t, c, ns, "scaled")
	assert.Empty(t, managedObjects(t, c, user))
	nsObj, err = getU(t, c, render.GVKNamespace, "", userNS)
	require.NoError(t, err)
	assert.NotNil(t, nsObj.GetDeletionTimestamp())
}

func TestTemplateNotFoundRecovers(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testenv.Require(t).Config, ns)
	user := userID("carol")
	tmplName := "late-" + ns

	ud := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.UserDeploymentSpec{UserID: user, Template: tmplName}}
	require.NoError(t, c.Create(ctx, ud))
	got := waitPhase(t, c, ns, "app", v1alpha1.PhaseError)
	assert.Equal(t, `DeploymentTemplate "`+tmplName+`" not found`, got.Status.LastError)
	assert.Equal(t, "False/TemplateNotFound: "+got.Status.LastError, condition(got, "TemplateResolved"))
	assert.Contains(t, condition(got, v1alpha1.ConditionStalled), "True/TemplateNotFound")

	require.NoError(t, c.Create(ctx, webTemplate(tmplName)))
	got = waitPhase(t, c, ns, "app", v1alpha1.PhaseProvisioning)
	assert.Empty(t, got.Status.LastError)
	assert.Empty(t, condition(got, v1alpha1.ConditionStalled))
	waitObject(t, c, render.GVKDeployment, "user-"+user, "app-web", nil)
}

func TestDependsOn(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testenv.Require(t).Config, ns)
	user := userID("dave")
	userNS := "user-" + user

	front := rawUD(ns, "front", user)
	front.Spec.DependsOn = []string{"orders"}
	require.NoError(t, c.Create(ctx, front))
	got := waitPhase(t, c, ns, "front", v1alpha1.PhasePending)
	assert.Equal(t, "False/DependenciesNotReady: waiting for orders to be ready", condition(got, "DependenciesReady"))

	require.NoError(t, c.Create(ctx, rawUD(ns, "orders", user)))
	waitPhase(t, c, ns, "orders", v1alpha1.PhaseProvisioning)
	// orders' status write is what reconciles front again, after the test saw
	// it: watch that front still waits.
	assert.Never(t, func() bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: userNS, Name: "front-app"}, &appsv1.Deployment{})
		return !apierrors.IsNotFound(err)
	}, settle, 100*time.Millisecond, "front waits for orders")
	err := c.Get(ctx, client.ObjectKey{Namespace: userNS, Name: "front-app"}, &appsv1.Deployment{})
	assert.True(t, apierrors.IsNotFound(err), "front waits for orders: %v", err)

	markReady(t, c, userNS, ns+".orders")
	waitPhase(t, c, ns, "orders", v1alpha1.PhaseReady)
	got = waitPhase(t, c, ns, "front", v1alpha1.PhaseProvisioning)
	assert.Equal(t, "True/DependenciesReady: all dependencies are ready", condition(got, "DependenciesReady"))
	waitObject(t, c, render.GVKDeployment, userNS, "front-app", nil)
}

func TestHostConflict(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testenv.Require(t).Config, ns)
	user := userID("erin")
	tmplName := "web-" + ns
	require.NoError(t, c.Create(ctx, webTemplate(tmplName)))

	shop := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.UserDeploymentSpec{UserID: user, Template: tmplName}}
	require.NoError(t, c.Create(ctx, shop))
	waitPhase(t, c, ns, "shop", v1alpha1.PhaseProvisioning) // holds shop and shop-admin

	require.NoError(t, c.Create(ctx, rawUD(ns, "shop-admin", userID("frank"))))
	got := waitPhase(t, c, ns, "shop-admin", v1alpha1.PhaseError)
	host := "shop-admin." + domain
	assert.Equal(t, "False/HostConflict: host already in use: "+host+" (used by "+ns+"/shop)", condition(got, "IngressReady"))
	assert.Empty(t, got.Status.Ingresses)
	shopNow := getUD(t, c, ns, "shop")
	assert.Len(t, shopNow.Status.Ingresses, 2, "the holder keeps its host")
}

func TestTiers(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testenv.Require(t).Config, ns)
	user := userID("gina")

	free := rawUD(ns, "free", user)
	require.NoError(t, c.Create(ctx, free))
	q := waitObject(t, c, render.GVKResourceQuota, "user-"+user, render.UserChildName, nil)
	assert.Equal(t, map[string]any{"pods": "10", "persistentvolumeclaims": "2", "requests.cpu": "1", "requests.memory": "1Gi",
		"limits.cpu": "2", "limits.memory": "2Gi", "requests.storage": "5Gi"}, nested(q, "spec", "hard"))
	assert.Equal(t, "free", q.GetLabels()["scheduler.opsnorth.io/tier"])

	gold := rawUD(ns, "gold", userID("hal"))
	gold.Spec.Tier = "gold"
	require.NoError(t, c.Create(ctx, gold))
	got := waitPhase(t, c, ns, "gold", v1alpha1.PhaseError)
	assert.Equal(t, `unknown tier "gold" (known: enterprise, free, pro)`, got.Status.LastError)
	assert.Contains(t, condition(got, v1alpha1.ConditionStalled), "True/UnknownTier")

	big := rawUD(ns, "big", userID("ian"))
	big.Spec.Replicas = ptr.To[int32](5)
	require.NoError(t, c.Create(ctx, big))
	got = waitPhase(t, c, ns, "big", v1alpha1.PhaseError)
	assert.Equal(t, "service app: 5 replicas exceed the free tier's maximum of 2", got.Status.LastError)
	assert.Contains(t, condition(got, v1alpha1.ConditionStalled), "True/TierLimitExceeded")

	// The phase gauge counts this manager's deployments from its cache (it
	// runs without leader election, so it leads), which may not show yet the
	// statuses the test read from the API server; errors count by reason
	// (before the status write).
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, map[string]float64{"pending": 0, "provisioning": 1, "ready": 0, "stopped": 0, "error": 2, "deleting": 0, "deleted": 0},
			testkit.ByLabel(t, "opsnorth_userdeployments", "phase"))
	}, wait, 200*time.Millisecond)
	assert.GreaterOrEqual(t, testkit.ByLabel(t, "opsnorth_userdeployment_reconcile_errors_total", "reason")["UnknownTier"], 1.0)
}

func TestRestartCostsNoWrites(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	env := testenv.Require(t)
	first := startManager(t, env.Config, ns)
	user := userID("jo")
	require.NoError(t, c.Create(context.Background(), rawUD(ns, "hello", user)))
	markReady(t, c, "user-"+user, ns+".hello")
	waitPhase(t, c, ns, "hello", v1alpha1.PhaseReady)
	time.Sleep(2 * time.Second)
	first.Stop(t)

	before := reconciles(t)
	second := startManager(t, env.Config, ns)
	assertNoWrites(t, second, before)
	assert.Equal(t, v1alpha1.PhaseReady, getUD(t, c, ns, "hello").Status.Phase)
}
