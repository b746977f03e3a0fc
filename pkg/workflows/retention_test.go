package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

func (k *cluster) workflowGone(name string) bool {
	_, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Get(context.Background(), name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// TestRetention: finished workflows are deleted at their TTL (their own,
// else the manager's default), after their webhook settled, and counted;
// running ones stay.
func TestRetention(t *testing.T) {
	k := newCluster(t)
	collected := func() float64 { return testutil.ToFloat64(workflows.CollectedTotal.WithLabelValues(k.ns)) }
	startManager(t, k.ns, "--default-workflow-ttl-seconds-after-finished=2", "--webhook-max-attempts=1000")
	hook := testkit.NewReceiver(t, testkit.FailFirst(1000, 503))

	own := stepWorkflow("own", step("a", nil))
	own.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	k.create(own)
	k.create(stepWorkflow("default", step("a", nil)))
	k.create(stepWorkflow("running", step("a", nil)))
	hooked := stepWorkflow("hooked", step("a", nil))
	hooked.Spec.TTLSecondsAfterFinished, hooked.Spec.WebhookURL = ptr.To[int32](0), hook.URL
	k.create(hooked)
	for _, name := range []string{"own", "default", "hooked"} {
		k.finish(k.waitTask(name, "a", 0), v1alpha1.TaskSucceeded, nil)
	}
	k.run(k.waitTask("running", "a", 0))

	done := k.waitWorkflow("default", v1alpha1.WorkflowSucceeded)
	require.Eventually(t, func() bool { return k.workflowGone("own") }, wait, 50*time.Millisecond, "ttl 0")
	require.Eventually(t, func() bool { return k.workflowGone("default") }, wait, 50*time.Millisecond, "the default TTL")
	assert.False(t, time.Now().Before(done.Status.CompletionTime.Add(2*time.Second)), "not before its TTL")
	assert.Equal(t, float64(2), collected())
	assert.Never(t, func() bool { return k.workflowGone("running") || k.workflowGone("hooked") }, settle, 100*time.Millisecond,
		"a running workflow, or one whose webhook is still being delivered, was deleted")
}
