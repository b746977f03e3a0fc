//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// TestKueueQueue: 30 tasks naming a LocalQueue that the real Kueue
// (scripts/kueue.sh) limits to 5 pods run through it: never more than 5
// of their Jobs admitted and unfinished at once, every task Succeeded, and
// a task waiting in the queue says Queued.
func TestKueueQueue(t *testing.T) {
	c := requireCluster(t)
	bin, crdDir, err := localcluster.KueueBinary(root)
	require.NoError(t, err, "build Kueue first: make kueue")
	_, err = c.StartKueue(t.Context(), bin, crdDir)
	require.NoError(t, err)
	require.NoError(t, c.CreateKueueQueue(t.Context(), taskNamespace, "agents", 5))

	cs := scheduler(t, c)
	user := fmt.Sprintf("e2e-queue-%d", time.Now().Unix()%100000)
	selector := metav1.ListOptions{LabelSelector: labelkeys.UserID + "=" + user}
	jobs, err := c.Clientset.BatchV1().Jobs(taskNamespace).Watch(t.Context(), selector)
	require.NoError(t, err)
	defer jobs.Stop()
	const n = 30
	for i := range n {
		at := agentTask(fmt.Sprintf("%s-%02d", user, i), map[string]string{"KWOK_DELAY": "1s"}, func(at *v1alpha1.AgentTask) {
			at.Spec.UserID, at.Spec.QueueName = user, "agents"
			at.Labels = map[string]string{labelkeys.UserID: user}
		})
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), at, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	require.Eventually(t, func() bool {
		list, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).List(t.Context(), selector)
		for _, task := range list.Items {
			if err == nil && task.Status.Reason == "Queued" && task.Status.Message == "waiting in LocalQueue agents for admission by Kueue" {
				return true
			}
		}
		return false
	}, timeout, 100*time.Millisecond, "no task said it waits in its queue")

	admitted, finished, created := map[string]bool{}, map[string]bool{}, map[string]bool{}
	most, suspendedAtCreate := 0, 0
	deadline := time.After(3 * timeout)
	for len(finished) < n {
		select {
		case ev := <-jobs.ResultChan():
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if ev.Type == watch.Added && !created[j.Name] {
				created[j.Name] = true
				if ptr.Deref(j.Spec.Suspend, false) {
					suspendedAtCreate++
				}
			}
			if !ptr.Deref(j.Spec.Suspend, false) {
				admitted[j.Name] = true
			}
			if jobCondition(j, batchv1.JobComplete) != nil || jobCondition(j, batchv1.JobFailed) != nil {
				finished[j.Name] = true
			}
			running := 0
			for name := range admitted {
				if !finished[name] {
					running++
				}
			}
			most = max(most, running)
		case <-deadline:
			require.FailNow(t, "timed out", "%d of %d Jobs finished", len(finished), n)
		}
	}
	t.Logf("%d Jobs, all created suspended: %d; at most %d admitted and unfinished at once", n, suspendedAtCreate, most)
	assert.Equal(t, n, suspendedAtCreate, "every Job is created suspended, for Kueue to admit")
	assert.LessOrEqual(t, most, 5, "the queue admits at most 5 at a time")
	assert.Equal(t, 5, most, "the queue was used to its limit")
	list, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).List(t.Context(), selector)
	require.NoError(t, err)
	require.Len(t, list.Items, n)
	for _, task := range list.Items {
		assert.Equal(t, v1alpha1.TaskSucceeded, task.Status.Phase, "%s: %s", task.Name, task.Status.Message)
	}
}
