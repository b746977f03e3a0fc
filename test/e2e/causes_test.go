//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// These tests give AgentTasks and workflow steps what a real cluster does to
// a pod that cannot start, and check what the user sees: the reason and
// message within seconds of the cause, the start deadline failing the task
// with that reason, and the task running once the cause goes.

// seesWithin is how soon a task must show the cause of its wait: a few of
// the managers' reconciles and watch round trips, nowhere near the deadline.
const seesWithin = 10 * time.Second

// waitReason waits until the task shows reason and returns it and how long
// that took from since.
func waitReason(t *testing.T, name, reason string, since time.Time) (*v1alpha1.AgentTask, time.Duration) {
	t.Helper()
	got := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Reason == reason })
	took := time.Since(since)
	t.Logf("%s: reason %s after %s: %s", name, reason, took.Round(time.Millisecond), got.Status.Message)
	return got, took
}

// TestTaskStartCauses: each cause the task cannot heal ends it at once; the
// others keep it Pending with the cause until the start deadline.
func TestTaskStartCauses(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000

	t.Run("service account created a minute later", func(t *testing.T) {
		t.Parallel()
		name, sa := fmt.Sprintf("e2e-%d-late-sa", stamp), fmt.Sprintf("e2e-%d-agent", stamp)
		created := time.Now()
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(),
			agentTask(name, nil, func(at *v1alpha1.AgentTask) { at.Spec.ServiceAccountName = sa }), metav1.CreateOptions{})
		require.NoError(t, err)
		got, took := waitReason(t, name, "ServiceAccountNotFound", created)
		assert.Less(t, took, seesWithin)
		assert.Equal(t, v1alpha1.TaskPending, got.Status.Phase)
		assert.Equal(t, "spec.serviceAccountName: ServiceAccount "+taskNamespace+"/"+sa+" not found", got.Status.Message)

		time.Sleep(time.Until(created.Add(time.Minute)))
		_, err = c.Clientset.CoreV1().ServiceAccounts(taskNamespace).Create(t.Context(), &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: map[string]string{labelkeys.User: "e2e"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = c.Clientset.CoreV1().ServiceAccounts(taskNamespace).Delete(context.Background(), sa, metav1.DeleteOptions{})
		})
		done := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
		assert.Equal(t, v1alpha1.TaskSucceeded, done.Status.Phase, done.Status.Message)
	})

	t.Run("unschedulable until the start deadline", func(t *testing.T) {
		t.Parallel()
		name := fmt.Sprintf("e2e-%d-unschedulable", stamp)
		created := time.Now()
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), agentTask(name, nil, func(at *v1alpha1.AgentTask) {
			at.Spec.Resources = &v1alpha1.ResourceRequirements{Requests: &v1alpha1.ResourceAmounts{CPU: ptr.To(resource.MustParse("5000"))}}
			at.Spec.StartTimeoutSeconds = ptr.To(int64(20))
		}), metav1.CreateOptions{})
		require.NoError(t, err)
		got, took := waitReason(t, name, "Unschedulable", created)
		assert.Less(t, took, seesWithin)
		assert.Equal(t, v1alpha1.TaskPending, got.Status.Phase)
		assert.Contains(t, got.Status.Message, "Insufficient cpu", "the scheduler's own words")

		failed := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
		assert.Equal(t, v1alpha1.TaskFailed, failed.Status.Phase)
		assert.Equal(t, "Unschedulable", failed.Status.Reason)
		assert.Contains(t, failed.Status.Message, "the agent did not start within 20s")
		assert.Contains(t, failed.Status.Message, "Insufficient cpu")
		assert.Less(t, time.Since(created), 20*time.Second+seesWithin, "failed at the deadline, not later")
	})

	t.Run("refused at admission fails at once", func(t *testing.T) {
		t.Parallel()
		name := fmt.Sprintf("e2e-%d-admission", stamp)
		denyImage(t, c, fmt.Sprintf("e2e-%d-deny-forbidden", stamp), "ghcr.io/forbidden/")
		created := time.Now()
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(),
			agentTask(name, nil, func(at *v1alpha1.AgentTask) { at.Spec.Image = "ghcr.io/forbidden/agent:1" }), metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
		t.Logf("%s: %s after %s: %s", name, got.Status.Reason, time.Since(created).Round(time.Millisecond), got.Status.Message)
		assert.Less(t, time.Since(created), seesWithin)
		assert.Equal(t, v1alpha1.TaskFailed, got.Status.Phase)
		assert.Equal(t, "AdmissionDenied", got.Status.Reason)
		assert.Contains(t, got.Status.Message, "the Job cannot create the agent's pod")
		assert.Contains(t, got.Status.Message, "images from ghcr.io/forbidden/ are not allowed here")
	})

	t.Run("a workflow step that cannot start fails the workflow with its reason", func(t *testing.T) {
		t.Parallel()
		name := fmt.Sprintf("e2e-%d-wf-badimage", stamp)
		wf := &v1alpha1.Workflow{
			ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name},
			Spec: v1alpha1.WorkflowSpec{UserID: "e2e", Steps: []v1alpha1.WorkflowStep{
				{Name: "draft", Image: "agent:e2e"},
				{Name: "publish", Image: "Bad/Image"},
			}},
		}
		_, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Create(t.Context(), wf, metav1.CreateOptions{})
		require.NoError(t, err)
		var got *v1alpha1.Workflow
		require.Eventually(t, func() bool {
			got, err = cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
			return err == nil && got.Status.Phase.IsTerminal()
		}, timeout, tick)
		assert.Equal(t, v1alpha1.WorkflowFailed, got.Status.Phase)
		ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, "InvalidImageName", ready.Reason)
		require.Len(t, got.Status.StepStatuses, 2)
		assert.Equal(t, "InvalidImageName", got.Status.StepStatuses[1].Reason)
		assert.Contains(t, got.Status.Message, "publish")
	})
}

// TestTaskQuota: a quota that leaves no room for the agent's pod keeps the
// task Pending with the quota's message; once the quota goes, it runs. It
// owns the task namespace's quota, so it runs alone (no t.Parallel).
func TestTaskQuota(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000
	quota := fmt.Sprintf("e2e-%d-no-pods", stamp)
	_, err := c.Clientset.CoreV1().ResourceQuotas(taskNamespace).Create(t.Context(), &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quota},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	removed := false
	t.Cleanup(func() {
		if !removed {
			_ = c.Clientset.CoreV1().ResourceQuotas(taskNamespace).Delete(context.Background(), quota, metav1.DeleteOptions{})
		}
	})
	// The quota admission plugin refuses only once the quota controller has
	// computed the quota's usage.
	require.Eventually(t, func() bool {
		q, err := c.Clientset.CoreV1().ResourceQuotas(taskNamespace).Get(t.Context(), quota, metav1.GetOptions{})
		return err == nil && q.Status.Hard != nil
	}, timeout, tick)

	name := fmt.Sprintf("e2e-%d-quota", stamp)
	created := time.Now()
	_, err = cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), agentTask(name, nil), metav1.CreateOptions{})
	require.NoError(t, err)
	got, took := waitReason(t, name, "QuotaExceeded", created)
	assert.Less(t, took, seesWithin)
	assert.Equal(t, v1alpha1.TaskPending, got.Status.Phase)
	assert.Contains(t, got.Status.Message, "exceeded quota: "+quota)

	require.NoError(t, c.Clientset.CoreV1().ResourceQuotas(taskNamespace).Delete(t.Context(), quota, metav1.DeleteOptions{}))
	removed = true
	freed := time.Now()
	done := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
	assert.Equal(t, v1alpha1.TaskSucceeded, done.Status.Phase, done.Status.Message)
	t.Logf("quota deleted → task Succeeded: %s (the Job controller's pod-creation back-off)", time.Since(freed).Round(time.Millisecond))
}

// denyImage installs, for the test, an admission policy refusing pods in
// the task namespace whose first container's image starts with prefix: the
// kind of rule a platform adds beside Pod Security, refused the same way.
func denyImage(t *testing.T, c *localcluster.Cluster, name, prefix string) {
	t.Helper()
	policies := c.Clientset.AdmissionregistrationV1()
	_, err := policies.ValidatingAdmissionPolicies().Create(t.Context(), &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("!object.spec.containers[0].image.startsWith(%q)", prefix),
				Message:    "images from " + prefix + " are not allowed here",
			}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = policies.ValidatingAdmissionPolicyBindings().Create(t.Context(), &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": taskNamespace}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = policies.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = policies.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// A policy takes effect a moment after it is created: probe it with a
	// dry-run pod until it refuses.
	// The probe passes Pod Security's restricted level, which the task
	// namespace may enforce, so only the policy can refuse it.
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: taskNamespace},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", Image: prefix + "probe", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		}}
	var last error
	if !assert.Eventually(t, func() bool {
		_, last = c.Clientset.CoreV1().Pods(taskNamespace).Create(t.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), "are not allowed here")
	}, timeout, tick) {
		t.Fatalf("the admission policy never took effect; the probe's last answer: %v", last)
	}
}
