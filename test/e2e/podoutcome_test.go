//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// TestTaskSucceedsBeforeItsJob: with the real Job controller, which marks
// a Job Complete about a second after its pod succeeded, a task is
// Succeeded, with its output, ahead of its Job, and its Job still
// completes as before.
func TestTaskSucceedsBeforeItsJob(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	user := fmt.Sprintf("e2e-lead-%d", time.Now().Unix()%100000)
	const n = 5
	tasks, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Watch(t.Context(), metav1.ListOptions{LabelSelector: labelkeys.UserID + "=" + user})
	require.NoError(t, err)
	defer tasks.Stop()
	jobs, err := c.Clientset.BatchV1().Jobs(taskNamespace).Watch(t.Context(), metav1.ListOptions{LabelSelector: labelkeys.UserID + "=" + user})
	require.NoError(t, err)
	defer jobs.Stop()
	for i := range n {
		at := agentTask(fmt.Sprintf("%s-%d", user, i), map[string]string{"KWOK_TERMINATION_MESSAGE": `{"n":"` + fmt.Sprint(i) + `"}`},
			func(at *v1alpha1.AgentTask) {
				at.Spec.UserID = user
				at.Labels = map[string]string{labelkeys.UserID: user}
			})
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), at, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	succeeded, complete := map[string]time.Time{}, map[string]time.Time{}
	final := map[string]*v1alpha1.AgentTask{}
	deadline := time.After(timeout)
	for len(succeeded) < n || len(complete) < n {
		select {
		case ev := <-tasks.ResultChan():
			if at, ok := ev.Object.(*v1alpha1.AgentTask); ok && ev.Type != watch.Deleted && at.Status.Phase.IsTerminal() {
				if _, seen := succeeded[at.Name]; !seen {
					succeeded[at.Name], final[at.Name] = time.Now(), at
				}
			}
		case ev := <-jobs.ResultChan():
			if j, ok := ev.Object.(*batchv1.Job); ok && jobCondition(j, batchv1.JobComplete) != nil {
				if _, seen := complete[j.Name]; !seen {
					complete[j.Name] = time.Now()
				}
			}
		case <-deadline:
			require.FailNow(t, "timed out", "%d tasks ended, %d Jobs complete", len(succeeded), len(complete))
		}
	}
	var leads []time.Duration
	for name, task := range final {
		assert.Equal(t, v1alpha1.TaskSucceeded, task.Status.Phase, "%s: %s", name, task.Status.Message)
		assert.Equal(t, map[string]string{"n": name[len(name)-1:]}, task.Status.Output, name)
		leads = append(leads, complete[name].Sub(succeeded[name]))
	}
	slices.Sort(leads)
	t.Logf("task Succeeded ahead of its Job Complete by %v (sorted)", leads)
	assert.Positive(t, leads[n/2], "the median task is Succeeded before its Job is Complete")
}
