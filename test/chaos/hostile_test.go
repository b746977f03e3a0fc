//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/workflows"
)

// hostileNormal is how many normal two-step workflows surround the hostile
// ones (issue #15).
const hostileNormal = 100

// hostileDeadline is how soon after its creation each hostile workflow must
// show its reason.
const hostileDeadline = 20 * time.Second

// TestHostileWorkflowsAmidNormal creates, among 100 normal workflows, one
// whose input would expand to gigabytes, one whose first step's task name
// another AgentTask squats, and one whose webhook names a Secret of another
// user; an AgentTask forged to claim a workflow step is tried as well. The
// normal ones all succeed, no workflows manager restarts, and each hostile
// one ends with its reason within seconds.
func TestHostileWorkflowsAmidNormal(t *testing.T) {
	requireCluster(t)
	const drill, run = "hostile_workflows", "hostile"
	ctx := t.Context()
	cs := schedulerClient(t)
	kube := kubernetes.NewForConfigOrDie(cluster.Config)
	pids := map[int]bool{}
	for _, m := range running("workflows") {
		pids[m.Process.PID()] = true
	}
	require.Len(t, pids, 2, "both workflows replicas run")
	objMeta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: taskNamespace, Name: name, Labels: map[string]string{runLabel: run}}
	}
	wf := func(name string, steps int) *v1alpha1.Workflow {
		w := &v1alpha1.Workflow{ObjectMeta: objMeta(name), Spec: v1alpha1.WorkflowSpec{UserID: "chaos"}}
		for s := range steps {
			w.Spec.Steps = append(w.Spec.Steps, v1alpha1.WorkflowStep{
				Name: fmt.Sprintf("s%d", s), Image: "ghcr.io/opsnorth/agent:chaos", Input: map[string]string{"KWOK_DELAY": "500ms"},
			})
		}
		return w
	}

	squatted := run + "-squat"
	squat := &v1alpha1.AgentTask{
		ObjectMeta: objMeta(workflows.TaskName(squatted, "s0", 0)),
		Spec:       v1alpha1.AgentTaskSpec{TaskID: "squat", UserID: "mallory", Image: "ghcr.io/opsnorth/agent:chaos"},
	}
	_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(ctx, squat, metav1.CreateOptions{})
	require.ErrorContains(t, err, "has the form of a workflow step task", "the step-tasks policy refuses the squat")
	// A squat that predates the policy (or a cluster without it) is made
	// through the one identity the policy exempts; the manager must still
	// refuse to adopt it.
	asWorkflows := rest.CopyConfig(cluster.Config)
	asWorkflows.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:opsnorth-system:opsnorth-scheduler-workflows",
		Groups: []string{"system:authenticated"}}
	_, err = versioned.NewForConfigOrDie(asWorkflows).SchedulerV1alpha1().AgentTasks(taskNamespace).Create(ctx, squat, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.CoreV1().Secrets(taskNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: run + "-mallory", Namespace: taskNamespace,
			Labels: map[string]string{runLabel: run, labelkeys.User: "mallory"}},
		Data: map[string][]byte{"key": []byte("not-yours")},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.CoreV1().Secrets(taskNamespace).Delete(context.Background(), run+"-mallory", metav1.DeleteOptions{})
	})

	bomb := wf(run+"-bomb", 40)
	bomb.Spec.Input = map[string]string{"BIG": strings.Repeat("x", 32<<10)}
	for i := range bomb.Spec.Steps {
		in := map[string]string{}
		for k := range 128 {
			in[fmt.Sprintf("K%03d", k)] = strings.Repeat("${inputs.BIG}", 20)
		}
		bomb.Spec.Steps[i].Input = in
	}
	secret := wf(run+"-secret", 1)
	rcv := newReceiver(t)
	rcv.up(t)
	secret.Spec.WebhookURL = rcv.url("/workflows/" + secret.Name)
	secret.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: run + "-mallory", Key: "key"}
	hostile := []*v1alpha1.Workflow{bomb, wf(squatted, 2), secret}

	var all []*v1alpha1.Workflow
	var normal []string
	for i := range hostileNormal {
		w := wf(fmt.Sprintf("%s-n%03d", run, i), 2)
		all, normal = append(all, w), append(normal, w.Name)
		if i%33 == 16 && len(hostile) > 0 {
			all, hostile = append(all, hostile[0]), hostile[1:]
		}
	}
	all = append(all, hostile...)
	created := createAll(t, cs.SchedulerV1alpha1().Workflows(taskNamespace).Create, all)

	forged := &v1alpha1.AgentTask{
		ObjectMeta: objMeta(workflows.TaskName(run+"-n000", "s1", 0)),
		Spec:       v1alpha1.AgentTaskSpec{TaskID: "forged", UserID: "chaos", Image: "ghcr.io/opsnorth/agent:chaos"},
	}
	forged.Labels[labelkeys.Workflow] = run + "-n000"
	_, err = cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(ctx, forged, metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "a forged step task is refused at admission: %v", err)

	expect := []struct {
		name, reason, message string
		webhook               bool
	}{
		{name: bomb.Name, reason: workflows.ReasonInputTooLarge, message: `step "s0" input "K000" expands to more than 32768 bytes`},
		{name: squatted, reason: workflows.ReasonTaskNameConflict, message: "exists and is not owned by this workflow"},
		// Retried within the delivery's attempts (fixing the Secret heals it), saying why.
		{name: secret.Name, message: "webhook signing secret unusable", webhook: true},
	}
	for _, e := range expect {
		start := created[e.name]
		got := waitWorkflow(t, cs, e.name, hostileDeadline, func(w *v1alpha1.Workflow) bool {
			typ := v1alpha1.ConditionReady
			if e.webhook {
				typ = "WebhookDelivered"
			}
			c := meta.FindStatusCondition(w.Status.Conditions, typ)
			if e.webhook {
				return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, e.message)
			}
			return c != nil && c.Reason == e.reason
		})
		record(t, drill, e.name+"_seconds_to_reason", time.Since(start).Seconds())
		if e.webhook {
			assert.Contains(t, got.Status.Webhook.LastError, e.message, e.name)
			assert.NotContains(t, got.Status.Webhook.LastError, "not-yours", "never the secret's value")
			continue
		}
		assert.Contains(t, got.Status.Message, e.message, e.name)
	}
	for _, name := range normal {
		got := waitWorkflow(t, cs, name, 5*time.Minute, func(w *v1alpha1.Workflow) bool { return w.Status.Phase.IsTerminal() })
		assert.Equal(t, v1alpha1.WorkflowSucceeded, got.Status.Phase, "%s: %s", name, got.Status.Message)
	}
	record(t, drill, "seconds_to_all_normal_done", time.Since(created[normal[0]]).Seconds())
	for _, m := range replicas["workflows"] {
		assert.True(t, pids[m.Process.PID()] && !m.Process.Exited(), "workflows manager %d kept running", m.Process.PID())
		record(t, drill, fmt.Sprintf("workflows_peak_rss_mib_pid_%d", m.Process.PID()), peakRSSMiB(m.Process.PID()))
	}

	del := metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationBackground)}
	sel := metav1.ListOptions{LabelSelector: runLabel + "=" + run}
	require.NoError(t, cs.SchedulerV1alpha1().Workflows(taskNamespace).DeleteCollection(ctx, del, sel))
	require.NoError(t, cs.SchedulerV1alpha1().AgentTasks(taskNamespace).DeleteCollection(ctx, del, sel))
}

// createAll creates the workflows with 8 clients and returns when each was created.
func createAll(t *testing.T, create func(context.Context, *v1alpha1.Workflow, metav1.CreateOptions) (*v1alpha1.Workflow, error),
	all []*v1alpha1.Workflow) map[string]time.Time {
	t.Helper()
	var (
		mu   sync.Mutex
		at   = map[string]time.Time{}
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(all); i = int(next.Add(1)) - 1 {
				start := time.Now()
				err := retryCreate(t.Context(), func(ctx context.Context) error {
					_, err := create(ctx, all[i], metav1.CreateOptions{})
					return err
				})
				assert.NoError(t, err, all[i].Name)
				mu.Lock()
				at[all[i].Name] = start
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return at
}

// waitWorkflow polls the workflow until done says so, or fails the test
// with its last status once within passes.
func waitWorkflow(t *testing.T, cs versioned.Interface, name string, within time.Duration, done func(*v1alpha1.Workflow) bool) *v1alpha1.Workflow {
	t.Helper()
	var last *v1alpha1.Workflow
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		w, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err == nil {
			if last = w; done(w) {
				return w
			}
		}
	}
	if last == nil {
		require.FailNow(t, "workflow never read", name)
	}
	require.FailNowf(t, "workflow never reached the expected state", "%s within %s; last status: %+v", name, within, last.Status)
	return nil
}

// peakRSSMiB is the process's peak resident set (VmHWM), in MiB.
func peakRSSMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
