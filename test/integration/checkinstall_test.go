package integration

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/pkg/testenv"
)

// TestCheckInstallBinary runs `tasks check-install`, what the Helm chart's
// test pod runs, against the real apiserver as a user holding only what the
// chart's test ServiceAccount holds (test/helm checks the chart grants
// exactly these rules): get on the named Deployments in the managers'
// namespace and on the named CRDs. It fails while the Deployment is not
// Available, naming it, and passes once it is and the CRDs are Established
// (the apiserver's own condition: envtest installed them).
func TestCheckInstallBinary(t *testing.T) {
	env := testenv.Require(t)
	ctx := context.Background()
	kube, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	const ns, name, user = "check-install", "opsnorth-scheduler-tasks", "helm-test"
	crds := []string{"agenttasks.scheduler.opsnorth.io", "workflows.scheduler.opsnorth.io"}
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	_, err = kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: crds, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user}, Subjects: subjects}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{name}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user}, Subjects: subjects}, metav1.CreateOptions{})
	require.NoError(t, err)

	labels := map[string]string{"app": "x"}
	d, err := kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "opsnorth/scheduler-tasks"}}},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	bin := buildBinary(t, env.RepoRoot, t.TempDir(), "tasks")
	kubeconfig, err := env.KubeconfigFor(t.TempDir(), user)
	require.NoError(t, err)
	run := func(deployments string) (string, error) {
		out, err := exec.Command(bin, "check-install", "--kubeconfig="+kubeconfig, "--namespace="+ns,
			"--deployment="+deployments, "--crd="+crds[0]+","+crds[1], "--timeout=3s").CombinedOutput()
		return string(out), err
	}

	out, err := run(name)
	require.Error(t, err, "the Deployment is not Available yet:\n%s", out)
	assert.Contains(t, out, "Deployment check-install/opsnorth-scheduler-tasks: NOT READY: no Available condition yet")
	assert.Contains(t, out, "CustomResourceDefinition workflows.scheduler.opsnorth.io: Established")

	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Conditions: []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
	_, err = kube.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	require.NoError(t, err)
	out, err = run(name)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "Deployment check-install/opsnorth-scheduler-tasks: Available")
	assert.Contains(t, out, "CustomResourceDefinition agenttasks.scheduler.opsnorth.io: Established")

	out, err = run("opsnorth-scheduler-other")
	require.Error(t, err)
	assert.Contains(t, out, "forbidden", "it may read nothing beyond the names it was granted:\n%s", out)
}
