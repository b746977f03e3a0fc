package deployments_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestMain(m *testing.M) { testenv.RunMain(m) }

func webTemplate(name string) *v1alpha1.DeploymentTemplate {
	q := func(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }
	return &v1alpha1.DeploymentTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.DeploymentTemplateSpec{Services: []v1alpha1.TemplateService{
			{
				Name: "web", Image: "ghcr.io/opsnorth/web:1", Env: []v1alpha1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}},
				Ports:  []v1alpha1.ServicePort{{Name: "http", Port: 8080}, {Name: "metrics", Port: 9090}},
				Expose: "http", Replicas: ptr.To[int32](2),
				Resources: &v1alpha1.ResourceRequirements{Requests: &v1alpha1.ResourceAmounts{CPU: q("100m"), Memory: q("128Mi")},
					Limits: &v1alpha1.ResourceAmounts{CPU: q("500m"), Memory: q("512Mi")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}},
				Metrics:        &v1alpha1.MetricsEndpoint{Port: "metrics", Interval: "30s"},
			},
			{
				Name: "worker", Image: "ghcr.io/opsnorth/worker:1", Command: []string{"/worker"},
				Storage: &v1alpha1.Storage{Size: resource.MustParse("1Gi"), MountPath: "/var/lib/worker"},
			},
			{Name: "admin", Image: "ghcr.io/opsnorth/admin:1", Ports: []v1alpha1.ServicePort{{Name: "http", Port: 3000}}, Expose: "http"},
		}},
	}
}

// reconciles is controller-runtime's count of userdeployment reconciles.
func reconciles(t *testing.T) float64 {
	return testkit.ByLabel(t, "controller_runtime_reconcile_total", "controller")["userdeployment"]
}

// assertNoWrites waits until at least one more reconcile ran and the queue
// settled, then checks the manager wrote nothing.
func assertNoWrites(t *testing.T, mgr *testkit.Manager, before float64) {
	t.Helper()
	require.Eventually(t, func() bool { return reconciles(t) > before }, wait, 100*time.Millisecond)
	// The reconcile counted may be another one than the reconcile awaited:
	// keep watching.
	assert.Never(t, func() bool { return len(mgr.Requests.Writes()) > 0 }, settle, 100*time.Millisecond,
		"a converged deployment costs no writes")
	assert.Empty(t, mgr.Requests.Writes(), "a converged deployment costs no writes")
}

func TestTemplateLifecycle(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	mgr := startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)
	user := userID("alice")
	userNS := "user-" + user
	tmplName := "web-" + ns
	require.NoError(t, c.Create(ctx, webTemplate(tmplName)))

	ud := &v1alpha1.UserDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.UserDeploymentSpec{
			UserID: user, Template: tmplName, Tier: "pro",
			ConfigData:        v1alpha1.EnvMap{"LOG_LEVEL": "debug"},
			ConfigFiles:       []v1alpha1.ConfigFile{{Path: "/etc/shop/settings.yaml", Content: "a: 1\n"}},
			ServiceConfigData: map[string]v1alpha1.EnvMap{"web": {"WEB_CONCURRENCY": "4"}},
			Secrets:           []v1alpha1.SecretReference{{Name: "DATABASE_URL", RemoteRef: v1alpha1.RemoteSecretReference{Key: "shop", Property: "db"}}},
		},
	}
	require.NoError(t, c.Create(ctx, ud))
	key := ns + ".shop"

	t.Run("namespace, quota and limit range", func(t *testing.T) {
		nsObj := waitObject(t, c, render.GVKNamespace, "", userNS, nil)
		assert.Equal(t, "restricted", nsObj.GetLabels()["pod-security.kubernetes.io/enforce"])
		assert.Equal(t, user, nsObj.GetLabels()["scheduler.opsnorth.io/user"])
		assert.Equal(t, "opsnorth-scheduler", nsObj.GetLabels()["app.kubernetes.io/managed-by"])
		assert.NotEmpty(t, nsObj.GetAnnotations()[render.AnnotationCreatedNamespace])
		q := waitObject(t, c, render.GVKResourceQuota, userNS, render.UserChildName, nil)
		assert.Equal(t, "50", nested(q, "spec", "hard", "pods"))
		aq := waitObject(t, c, render.GVKResourceQuota, userNS, render.AffinityQuotaName, nil)
		assert.Equal(t, "0", nested(aq, "spec", "hard", "pods"), "no pod with cross-namespace pod affinity")
		assert.Equal(t, "CrossNamespacePodAffinity", nested(aq, "spec", "scopeSelector", "matchExpressions").([]any)[0].(map[string]any)["scopeName"])
		lr := waitObject(t, c, render.GVKLimitRange, userNS, render.UserChildName, nil)
		assert.Equal(t, "4", nested(lr, "spec", "limits").([]any)[0].(map[string]any)["max"].(map[string]any)["cpu"])
	})

	t.Run("children", func(t *testing.T) {
		env := waitObject(t, c, render.GVKConfigMap, userNS, "shop-web-env", nil)
		assert.Equal(t, map[string]any{"LOG_LEVEL": "debug", "WEB_CONCURRENCY": "4"}, nested(env, "data"))
		files := waitObject(t, c, render.GVKConfigMap, userNS, "shop-web-files", nil)
		assert.Len(t, nested(files, "data"), 1)
		es := waitObject(t, c, render.GVKExternalSecret, userNS, "shop-secrets", nil)
		assert.Equal(t, map[string]any{"kind": "ClusterSecretStore", "name": "default"}, nested(es, "spec", "secretStoreRef"))
		assert.Equal(t, []string{"DATABASE_URL=users/" + user + "/shop#db"}, remoteRefs(es), "the key is read under the user's prefix")

		var d appsv1.Deployment
		require.Eventually(t, func() bool {
			return c.Get(ctx, client.ObjectKey{Namespace: userNS, Name: "shop-web"}, &d) == nil
		}, wait, 200*time.Millisecond)
		assert.Equal(t, int32(2), *d.Spec.Replicas)
		ctr := d.Spec.Template.Spec.Containers[0]
		assert.Equal(t, "ghcr.io/opsnorth/web:1", ctr.Image)
		assert.Equal(t, ptr.To(false), ctr.SecurityContext.AllowPrivilegeEscalation)
		assert.Equal(t, []corev1.Capability{"ALL"}, ctr.SecurityContext.Capabilities.Drop)
		assert.Equal(t, ptr.To(true), d.Spec.Template.Spec.SecurityContext.RunAsNonRoot)
		assert.Equal(t, "shop-secrets", ctr.EnvFrom[1].SecretRef.Name)
		assert.Equal(t, "/etc/shop/settings.yaml", ctr.VolumeMounts[0].MountPath)
		assert.Equal(t, key, d.Annotations[render.AnnotationUserDeployment])

		svc := waitObject(t, c, render.GVKService, userNS, "shop-web", nil)
		assert.Len(t, nested(svc, "spec", "ports"), 2)
		pvc := waitObject(t, c, render.GVKPVC, userNS, "shop-worker-data", nil)
		assert.Equal(t, "1Gi", nested(pvc, "spec", "resources", "requests", "storage"))
		sm := waitObject(t, c, render.GVKServiceMonitor, userNS, "shop-web", nil)
		assert.Equal(t, "metrics", nested(sm, "spec", "endpoints").([]any)[0].(map[string]any)["port"])
		ir := waitObject(t, c, render.GVKIngressRoute, userNS, "shop-admin", nil)
		assert.Equal(t, "Host(`shop-admin."+domain+"`)", nested(ir, "spec", "routes").([]any)[0].(map[string]any)["match"])
		assert.Equal(t, "letsencrypt", nested(ir, "spec", "tls", "certResolver"))
		np := waitObject(t, c, render.GVKNetworkPolicy, userNS, "shop-isolation", nil)
		assert.Equal(t, []any{"Ingress", "Egress"}, nested(np, "spec", "policyTypes"))
	})

	t.Run("provisioning then ready", func(t *testing.T) {
		got := waitPhase(t, c, ns, "shop", v1alpha1.PhaseProvisioning)
		assert.Equal(t, userNS, got.Status.Namespace)
		markReady(t, c, userNS, key)
		got = waitPhase(t, c, ns, "shop", v1alpha1.PhaseReady)
		assert.Equal(t, int32(4), got.Status.ReadyReplicas)
		assert.Equal(t, []v1alpha1.IngressStatus{
			{Service: "web", Host: "shop." + domain, URL: "https://shop." + domain, Visibility: "public"},
			{Service: "admin", Host: "shop-admin." + domain, URL: "https://shop-admin." + domain, Visibility: "public"},
		}, got.Status.Ingresses)
		assert.Contains(t, condition(got, v1alpha1.ConditionReady), "True/Ready")
		assert.NotNil(t, got.Status.LastReconcile)
		assert.Equal(t, []string{"scheduler.opsnorth.io/cleanup"}, got.Finalizers)
		require.Eventually(t, func() bool {
			var evs eventsv1.EventList
			if c.List(ctx, &evs, client.InNamespace(ns)) != nil {
				return false
			}
			reasons := map[string]bool{}
			for _, e := range evs.Items {
				if e.Regarding.Name == "shop" && e.ReportingController == "opsnorth-scheduler-deployments" {
					reasons[e.Reason] = true
				}
			}
			return reasons["PhaseProvisioning"] && reasons["PhaseReady"]
		}, wait, 200*time.Millisecond, "phase change events")
	})

	t.Run("converged re-reconcile writes nothing", func(t *testing.T) {
		time.Sleep(2 * time.Second) // let the last status write's event pass
		mgr.Requests.Reset()
		before := reconciles(t)
		cur := getUD(t, c, ns, "shop")
		cur.Annotations = map[string]string{"touched": "yes"} // metadata only: a reconcile, no spec change
		require.NoError(t, c.Update(ctx, cur))
		assertNoWrites(t, mgr, before)
	})

	t.Run("drift is repaired", func(t *testing.T) {
		svc, err := getU(t, c, render.GVKService, userNS, "shop-admin")
		require.NoError(t, err)
		require.NoError(t, c.Delete(ctx, svc))
		waitObject(t, c, render.GVKService, userNS, "shop-admin", func(u *unstructured.Unstructured) bool {
			return u.GetUID() != svc.GetUID()
		})
		var d appsv1.Deployment
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: userNS, Name: "shop-admin"}, &d))
		d.Spec.Template.Spec.Containers[0].Image = "evil:latest"
		require.NoError(t, c.Update(ctx, &d))
		waitObject(t, c, render.GVKDeployment, userNS, "shop-admin", func(u *unstructured.Unstructured) bool {
			return nested(u, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["image"] == "ghcr.io/opsnorth/admin:1"
		})
	})

	t.Run("template edit rolls out", func(t *testing.T) {
		var tmpl v1alpha1.DeploymentTemplate
		require.NoError(t, c.Get(ctx, client.ObjectKey{Name: tmplName}, &tmpl))
		tmpl.Spec.Services[0].Image = "ghcr.io/opsnorth/web:2"
		require.NoError(t, c.Update(ctx, &tmpl))
		waitObject(t, c, render.GVKDeployment, userNS, "shop-web", func(u *unstructured.Unstructured) bool {
			return nested(u, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["image"] == "ghcr.io/opsnorth/web:2"
		})
		waitPhase(t, c, ns, "shop", v1alpha1.PhaseProvisioning)
		markReady(t, c, userNS, key)
		waitPhase(t, c, ns, "shop", v1alpha1.PhaseReady)
	})

	t.Run("stopped scales to zero and keeps config", func(t *testing.T) {
		cur := getUD(t, c, ns, "shop")
		cur.Spec.DesiredState = v1alpha1.DesiredStopped
		require.NoError(t, c.Update(ctx, cur))
		got := waitPhase(t, c, ns, "shop", v1alpha1.PhaseStopped)
		assert.Contains(t, condition(got, v1alpha1.ConditionReady), "True/Stopped")
		for _, name := range []string{"shop-web", "shop-worker", "shop-admin"} {
			d := waitObject(t, c, render.GVKDeployment, userNS, name, nil)
			assert.Equal(t, int64(0), nested(d, "spec", "replicas"), name)
		}
		waitObject(t, c, render.GVKConfigMap, userNS, "shop-web-env", nil)
		waitObject(t, c, render.GVKPVC, userNS, "shop-worker-data", nil)
	})

	t.Run("desiredState deleted keeps the retained claim and with it the namespace", func(t *testing.T) {
		cur := getUD(t, c, ns, "shop")
		cur.Spec.DesiredState = v1alpha1.DesiredDeleted
		require.NoError(t, c.Update(ctx, cur))
		got := waitPhase(t, c, ns, "shop", v1alpha1.PhaseDeleted)
		assert.Empty(t, got.Status.Ingresses)
		assert.Zero(t, got.Status.ReadyReplicas)
		assert.Equal(t, []string{"shop-worker-data"}, got.Status.RetainedClaims)
		want := "every child removed except the retained volume claims shop-worker-data; namespace " + userNS +
			" kept: it holds retained volume claims (storage.whenDeleted: Retain): shop-worker-data"
		assert.Equal(t, "True/NamespaceKept: "+want, condition(got, v1alpha1.ConditionReady))
		assert.Equal(t, []string{"LimitRange/opsnorth-tier", "Namespace/" + userNS, "PersistentVolumeClaim/shop-worker-data",
			"ResourceQuota/opsnorth-cross-namespace-affinity", "ResourceQuota/opsnorth-inventory", "ResourceQuota/opsnorth-tier"}, managedObjects(t, c, user))
		assert.Equal(t, want, waitEvent(t, c, ns, "shop", "NamespaceKept", "shop-worker-data"))
	})

	t.Run("coming back attaches the retained claim again", func(t *testing.T) {
		pvc := waitObject(t, c, render.GVKPVC, userNS, "shop-worker-data", nil)
		cur := getUD(t, c, ns, "shop")
		cur.Spec.DesiredState = v1alpha1.DesiredRunning
		require.NoError(t, c.Update(ctx, cur))
		waitPhase(t, c, ns, "shop", v1alpha1.PhaseProvisioning)
		waitEvent(t, c, ns, "shop", "ClaimReattached", "shop-worker-data")
		again := waitObject(t, c, render.GVKPVC, userNS, "shop-worker-data", nil)
		assert.Equal(t, pvc.GetUID(), again.GetUID(), "the same claim, with its data")
		assert.Empty(t, getUD(t, c, ns, "shop").Status.RetainedClaims)
	})

	t.Run("whenDeleted Delete removes every child and the namespace", func(t *testing.T) {
		tmpl := &v1alpha1.DeploymentTemplate{}
		require.NoError(t, c.Get(ctx, client.ObjectKey{Name: tmplName}, tmpl))
		tmpl.Spec.Services[1].Storage.WhenDeleted = v1alpha1.ClaimDelete
		require.NoError(t, c.Update(ctx, tmpl))
		waitObject(t, c, render.GVKPVC, userNS, "shop-worker-data", func(u *unstructured.Unstructured) bool {
			return u.GetAnnotations()[render.AnnotationWhenDeleted] == "Delete"
		})
		cur := getUD(t, c, ns, "shop")
		cur.Spec.DesiredState = v1alpha1.DesiredDeleted
		require.NoError(t, c.Update(ctx, cur))
		got := waitPhase(t, c, ns, "shop", v1alpha1.PhaseDeleted)
		assert.Empty(t, got.Status.RetainedClaims)
		assert.Equal(t, "True/Deleted: every child removed", condition(got, v1alpha1.ConditionReady))
		assert.Empty(t, managedObjects(t, c, user))
		nsObj, err := getU(t, c, render.GVKNamespace, "", userNS)
		require.NoError(t, err)
		assert.NotNil(t, nsObj.GetDeletionTimestamp(), "the namespace the manager created is deleted")
	})
}
