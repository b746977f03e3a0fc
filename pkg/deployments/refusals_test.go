package deployments_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/refusal"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestChildRefusedForGood: a Deployment a policy refuses stalls the
// UserDeployment with the policy's message and reason AdmissionDenied,
// instead of a retried "provisioning".
func TestChildRefusedForGood(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	user := userID("denied")
	rule := `!has(object.metadata.labels) || !('` + labelkeys.User + `' in object.metadata.labels) || object.metadata.labels['` +
		labelkeys.User + `'] != '` + user + `'`
	probe := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns, Labels: map[string]string{labelkeys.User: user}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	testkit.DenyCreate(t, c, "", "apps", "deployments", rule, "this user may run no Deployment", probe)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)

	if err := c.Create(t.Context(), rawUD(ns, "web", user)); !assert.NoError(t, err) {
		return
	}
	got := waitPhase(t, c, ns, "web", v1alpha1.PhaseError)
	assert.Contains(t, got.Status.LastError, "this user may run no Deployment")
	assert.Contains(t, condition(got, v1alpha1.ConditionStalled), "True/"+refusal.ReasonAdmissionDenied+": ")
}
