package tasks_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tasks"
)

// TestReferencesInTheSharedNamespace: a task may name a ServiceAccount,
// image pull Secret or webhook signing Secret of the shared task namespace
// only if it is labelled for the task's user (user-1) or for sharing;
// anything else fails the task before a Job exists, naming the field. A
// missing one keeps the task Pending with the reason until it is created.
func TestReferencesInTheSharedNamespace(t *testing.T) {
	k := newCluster(t, "tasks-references")
	own := map[string]string{labelkeys.User: "user-1"}
	bobs := map[string]string{labelkeys.User: "bob"}
	shared := map[string]string{labelkeys.Shared: labelkeys.SharedValue}
	for name, labels := range map[string]map[string]string{"own-sa": own, "bob-sa": bobs, "shared-sa": shared, "plain-sa": nil} {
		require.NoError(t, k.c.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: labels}}))
	}
	for name, labels := range map[string]map[string]string{"own-pull": own, "bob-pull": bobs, "bob-hook": bobs} {
		require.NoError(t, k.c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: labels},
			Data: map[string][]byte{"token": []byte("bob's key")}}))
	}
	startManager(t, k.ns, testArgs(true)...)

	refused := func(field, what string) string {
		return field + ": not allowed for this user: " + what + " is labelled neither scheduler.opsnorth.io/user=user-1 nor scheduler.opsnorth.io/shared=true"
	}
	for i, tc := range []struct {
		name    string
		mutate  func(*v1alpha1.AgentTask)
		refusal string // empty: the Job is created
	}{
		{"no service account", func(*v1alpha1.AgentTask) {}, ""},
		{"own service account", func(at *v1alpha1.AgentTask) { at.Spec.ServiceAccountName = "own-sa" }, ""},
		{"shared service account", func(at *v1alpha1.AgentTask) { at.Spec.ServiceAccountName = "shared-sa" }, ""},
		{"another user's service account", func(at *v1alpha1.AgentTask) { at.Spec.ServiceAccountName = "bob-sa" },
			refused("spec.serviceAccountName", "ServiceAccount "+k.ns+"/bob-sa")},
		{"unlabelled service account", func(at *v1alpha1.AgentTask) { at.Spec.ServiceAccountName = "plain-sa" },
			refused("spec.serviceAccountName", "ServiceAccount "+k.ns+"/plain-sa")},
		{"own pull secret", func(at *v1alpha1.AgentTask) { at.Spec.ImagePullSecrets = []string{"own-pull"} }, ""},
		{"another user's pull secret after an own one", func(at *v1alpha1.AgentTask) { at.Spec.ImagePullSecrets = []string{"own-pull", "bob-pull"} },
			refused("spec.imagePullSecrets[1]", "Secret "+k.ns+"/bob-pull")},
		{"another user's signing secret", func(at *v1alpha1.AgentTask) {
			at.Spec.WebhookURL, at.Spec.WebhookSecretRef = "https://hooks.example.com/x", &v1alpha1.SecretKeyReference{Name: "bob-hook", Key: "token"}
		}, refused("spec.webhookSecretRef", "Secret "+k.ns+"/bob-hook")},
		{"missing signing secret, read again when the webhook is due", func(at *v1alpha1.AgentTask) {
			at.Spec.WebhookURL, at.Spec.WebhookSecretRef = "https://hooks.example.com/x", &v1alpha1.SecretKeyReference{Name: "later", Key: "token"}
		}, ""},
	} {
		name := fmt.Sprintf("ref-%d", i)
		t.Run(tc.name, func(t *testing.T) {
			k := k.with(t)
			created := k.createTask(name, tc.mutate)
			if tc.refusal == "" {
				job := k.job(name)
				pod := job.Spec.Template.Spec
				assert.Equal(t, created.Spec.ServiceAccountName, pod.ServiceAccountName)
				if created.Spec.ServiceAccountName == "" {
					assert.Equal(t, ptr.To(false), pod.AutomountServiceAccountToken, "no token without a named ServiceAccount")
				} else {
					assert.Nil(t, pod.AutomountServiceAccountToken, "the allowed ServiceAccount's own setting")
				}
				return
			}
			failed := k.waitPhase(name, v1alpha1.TaskFailed)
			assert.Equal(t, tasks.ReasonReferenceNotAllowed, failed.Status.Reason)
			assert.Equal(t, tc.refusal, failed.Status.Message)
			assert.Empty(t, failed.Status.JobName)
			assert.Empty(t, k.jobsOf(name), "no Job")
			require.Eventually(t, func() bool {
				list := &eventsv1.EventList{}
				require.NoError(t, k.c.List(t.Context(), list, client.InNamespace(k.ns)))
				for _, e := range list.Items {
					if e.Regarding.Name == name && e.Type == corev1.EventTypeWarning && e.Note != "" {
						assert.Contains(t, e.Note, tc.refusal)
						return true
					}
				}
				return false
			}, wait, 100*time.Millisecond, "a Warning event says why")
		})
	}
}

// TestMissingReferences: a task naming a ServiceAccount or image pull
// Secret that does not exist yet is Pending with the reason, no Job, until
// the object is created; then its Job is created (the ServiceAccount is
// watched; the Secret is looked for again every few seconds).
func TestMissingReferences(t *testing.T) {
	k := newCluster(t, "tasks-missing-refs")
	startManager(t, k.ns, testArgs(true)...)
	own := map[string]string{labelkeys.User: "user-1"}
	for _, tc := range []struct {
		name, reason, message string
		mutate                func(*v1alpha1.AgentTask)
		create                client.Object
		within                time.Duration
	}{
		{"service account", "ServiceAccountNotFound", "spec.serviceAccountName: ServiceAccount " + k.ns + "/late-sa not found",
			func(at *v1alpha1.AgentTask) { at.Spec.ServiceAccountName = "late-sa" },
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "late-sa", Namespace: k.ns, Labels: own}}, 2 * time.Second},
		{"pull secret", tasks.ReasonSecretNotFound, "spec.imagePullSecrets[0]: Secret " + k.ns + "/late-pull not found",
			func(at *v1alpha1.AgentTask) { at.Spec.ImagePullSecrets = []string{"late-pull"} },
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late-pull", Namespace: k.ns, Labels: own}}, 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := k.with(t)
			name := "late-" + strings.ReplaceAll(tc.name, " ", "-")
			k.createTask(name, tc.mutate)
			var got *v1alpha1.AgentTask
			require.Eventually(t, func() bool {
				got = k.task(name)
				return got.Status.Reason == tc.reason
			}, wait, 20*time.Millisecond, "the task says what it waits for")
			assert.Equal(t, v1alpha1.TaskPending, got.Status.Phase)
			assert.Equal(t, tc.message, got.Status.Message)
			assert.Empty(t, k.jobsOf(name), "no Job while it is missing")

			require.NoError(t, k.c.Create(t.Context(), tc.create))
			created := time.Now()
			require.Eventually(t, func() bool { return len(k.jobsOf(name)) == 1 }, tc.within, 20*time.Millisecond,
				"the Job is created once the %s exists", tc.name)
			t.Logf("%s created → Job created: %s", tc.name, time.Since(created).Round(time.Millisecond))
		})
	}
}

// TestTenantBinding: without the admission policy the manager itself fails
// a task whose namespace is bound to another user, before a Job exists.
func TestTenantBinding(t *testing.T) {
	k := newCluster(t, "tasks-bound")
	ns := &corev1.Namespace{}
	require.NoError(t, k.c.Get(t.Context(), client.ObjectKey{Name: k.ns}, ns))
	ns.Labels = map[string]string{labelkeys.Tenant: "user-1"}
	require.NoError(t, k.c.Update(t.Context(), ns))
	startManager(t, k.ns, testArgs(true)...)

	k.createTask("own")
	k.job("own")
	k.createTask("spoofed", func(at *v1alpha1.AgentTask) { at.Spec.UserID = "bob" })
	failed := k.waitPhase("spoofed", v1alpha1.TaskFailed)
	assert.Equal(t, "TenantMismatch", failed.Status.Reason)
	assert.Equal(t, `spec.userId: "bob" is not "user-1", the user namespace tasks-bound is bound to (label scheduler.opsnorth.io/tenant)`,
		failed.Status.Message)
	assert.Empty(t, k.jobsOf("spoofed"), "no Job")
}
