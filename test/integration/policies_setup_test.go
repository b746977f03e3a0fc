package integration

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
)

// applyPolicies creates the policies and their bindings of the all-in-one
// overlay, and the reserved-hosts policy's parameters (its ConfigMap),
// removed when the test ends.
func applyPolicies(t *testing.T, env *testenv.Env) {
	t.Helper()
	dc := newDynamicClient(t, env.Config)
	resources := map[string]string{"ValidatingAdmissionPolicy": "validatingadmissionpolicies",
		"ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
		"MutatingAdmissionPolicy":          "mutatingadmissionpolicies",
		"MutatingAdmissionPolicyBinding":   "mutatingadmissionpolicybindings"}
	n := 0
	for _, obj := range renderOverlay(t, filepath.Join(env.RepoRoot, "kustomize", "overlays", "all-in-one")) {
		if obj.GetKind() == "ConfigMap" && obj.GetName() == reservedHostsParams {
			createParams(t, env, obj)
		}
		if _, ok := resources[obj.GetKind()]; !ok {
			continue
		}
		n++
		rc := dc.Resource(admissionregistrationv1.SchemeGroupVersion.WithResource(resources[obj.GetKind()]))
		_, err := rc.Create(t.Context(), obj, metav1.CreateOptions{})
		require.NoError(t, err, "create %s %s", obj.GetKind(), obj.GetName())
		name := obj.GetName()
		t.Cleanup(func() { _ = rc.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	require.Equal(t, 20, n, "ten policies and their bindings: tenant binding, step tasks, approvals, workflow creator, workflow controls,"+
		" namespace marks, reserved hosts and the deployments, tasks and workflows managers' fences")
}

// reservedHostsParams is the ConfigMap the reserved-hosts policy reads.
const reservedHostsParams = "opsnorth-scheduler-reserved-hosts"

// createParams creates a policy's parameters, and the namespace they live
// in, for good: a deleted binding still reaches admission a moment later,
// and without its parameters it would refuse every UserDeployment meanwhile.
func createParams(t *testing.T, env *testenv.Env, obj *unstructured.Unstructured) {
	t.Helper()
	admin := kubernetes.NewForConfigOrDie(env.Config)
	_, err := admin.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetNamespace()}},
		metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	rc := newDynamicClient(t, env.Config).Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(obj.GetNamespace())
	if _, err = rc.Create(t.Context(), obj, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err, "create ConfigMap %s/%s", obj.GetNamespace(), obj.GetName())
	}
}

// waitPolicyActive waits until the tenant binding refuses a spoofed
// userId in ns: policies take effect a moment after they are created.
func waitPolicyActive(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	cs := newSchedulerClient(t, env.Config)
	require.Eventually(t, func() bool {
		err := create(t.Context(), cs, withUser(validImageUserDeployment(ns, "probe-"+rand.String(4)), "probe"))
		return apierrors.IsForbidden(err) || apierrors.IsInvalid(err)
	}, time.Minute, 200*time.Millisecond, "the tenant binding policy never took effect")
}

// waitPoliciesActive waits until every other policy refuses a dry-run
// probe in ns too: each policy takes effect on its own, a moment after it is
// created, and a loaded machine showed the tenant binding active well before
// the rest. Dry runs pass admission and change nothing.
func waitPoliciesActive(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	admin := kubernetes.NewForConfigOrDie(env.Config)
	cs := newSchedulerClient(t, env.Config)
	asDeployments := kubernetes.NewForConfigOrDie(impersonate(env.Config, deploymentsSA, "system:masters"))
	asTasks := kubernetes.NewForConfigOrDie(impersonate(env.Config, tasksSA, "system:masters"))
	asWorkflows := kubernetes.NewForConfigOrDie(impersonate(env.Config, workflowsSA, "system:masters"))
	_, err := admin.BatchV1().Jobs(ns).Create(t.Context(), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// The admission policies resolve the Workflow kind a moment after the
	// CRD is established; until then they refuse with "not found".
	gated := validWorkflow(ns, "probe-gated")
	withApproval(gated)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		created, err := cs.SchedulerV1alpha1().Workflows(ns).Create(t.Context(), gated, metav1.CreateOptions{})
		if assert.NoError(c, err) {
			gated = created
		}
	}, time.Minute, 200*time.Millisecond, "the probe workflow was never admitted")
	create := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	del := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	probes := map[string]func(ctx context.Context) error{
		"step tasks": func(ctx context.Context) error {
			at := validAgentTask(ns, "probe-step")
			at.Labels = map[string]string{labelkeys.Workflow: "victim"}
			_, err := cs.SchedulerV1alpha1().AgentTasks(ns).Create(ctx, at, create)
			return err
		},
		"approvals": func(ctx context.Context) error {
			wf := gated.DeepCopy()
			wf.Spec.Approvals = []schedulerv1alpha1.Approval{approval("not-the-writer")}
			_, err := cs.SchedulerV1alpha1().Workflows(ns).Update(ctx, wf, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		},
		"deployments fence": func(ctx context.Context) error {
			return asDeployments.CoreV1().Namespaces().Delete(ctx, ns, del)
		},
		"namespace marks": func(ctx context.Context) error {
			_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "probe-marks-" + rand.String(4),
				Annotations: map[string]string{"scheduler.opsnorth.io/created-by": "opsnorth-scheduler-deployments"}}}, create)
			return err
		},
		"reserved hosts": func(ctx context.Context) error {
			// The probe namespace is bound to alice: only this policy refuses it.
			_, err := cs.SchedulerV1alpha1().UserDeployments(ns).Create(ctx, withUser(validImageUserDeployment(ns, "www"), "alice"), create)
			return err
		},
		"tasks fence": func(ctx context.Context) error {
			return asTasks.BatchV1().Jobs(ns).Delete(ctx, "probe", del)
		},
		"workflows fence": func(ctx context.Context) error {
			_, err := asWorkflows.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, create)
			return err
		},
	}
	for name, probe := range probes {
		require.Eventually(t, func() bool {
			err := probe(t.Context())
			return apierrors.IsForbidden(err) || apierrors.IsInvalid(err)
		}, time.Minute, 200*time.Millisecond, "the %s policy never took effect", name)
	}
	require.Eventually(t, func() bool {
		wf := validWorkflow(ns, "probe-creator")
		wf.Annotations = map[string]string{labelkeys.Creator: "forged"}
		wf, err := cs.SchedulerV1alpha1().Workflows(ns).Create(t.Context(), wf, create)
		return err == nil && wf.Annotations[labelkeys.Creator] != "forged"
	}, time.Minute, 200*time.Millisecond, "the workflow creator policy never took effect")
}

func impersonate(cfg *rest.Config, user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:authenticated"}, groups...)}
	return c
}

// grantSchedulerKinds lets user manage every scheduler kind in namespace.
func grantSchedulerKinds(t *testing.T, c kubernetes.Interface, namespace, user string) {
	t.Helper()
	_, err := c.RbacV1().Roles(namespace).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"scheduler.opsnorth.io"}, Resources: []string{"userdeployments", "agenttasks", "workflows"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.RbacV1().RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "tenant"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func withUser(ud *schedulerv1alpha1.UserDeployment, userID string) *schedulerv1alpha1.UserDeployment {
	ud.Spec.UserID = userID
	ud.Spec.Replicas = ptr.To[int32](1)
	return ud
}

func create(ctx context.Context, cs versioned.Interface, ud *schedulerv1alpha1.UserDeployment) error {
	_, err := cs.SchedulerV1alpha1().UserDeployments(ud.Namespace).Create(ctx, ud, metav1.CreateOptions{})
	return err
}
