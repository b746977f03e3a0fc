//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
)

// taskNamespace is where the suite's tasks and workflows managers work.
const taskNamespace = "agent-tasks"

// runLabel marks the objects of one burst.
const runLabel = "chaos.opsnorth.io/run"

// burst is a batch of AgentTasks and Workflows created at once, each with a
// completion webhook to the receiver.
type burst struct {
	run                  string
	tasks, workflows     int
	steps                int
	taskDelay, stepDelay string
	rcv                  *receiver
	created              time.Time
}

func (b *burst) taskName(i int) string     { return fmt.Sprintf("%s-t%04d", b.run, i) }
func (b *burst) workflowName(i int) string { return fmt.Sprintf("%s-w%03d", b.run, i) }

// webhookPaths are the receiver paths every task and workflow of the burst
// must be delivered to.
func (b *burst) webhookPaths() []string {
	var out []string
	for i := range b.tasks {
		out = append(out, "/tasks/"+b.taskName(i))
	}
	for i := range b.workflows {
		out = append(out, "/workflows/"+b.workflowName(i))
	}
	return out
}

func schedulerClient(t *testing.T) versioned.Interface {
	t.Helper()
	cs, err := versioned.NewForConfig(cluster.Config)
	require.NoError(t, err)
	return cs
}

// start creates the burst with 8 clients in parallel in the background.
// half is closed once half of the objects exist (the moment for a fault),
// done receives the first error (or nil) when all are created.
func (b *burst) start(t *testing.T) (half <-chan struct{}, done <-chan error) {
	t.Helper()
	cs := schedulerClient(t)
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: taskNamespace, Name: name, Labels: map[string]string{runLabel: b.run}}
	}
	var taskJobs, wfJobs []func(context.Context) error
	for i := range b.tasks {
		name := b.taskName(i)
		taskJobs = append(taskJobs, func(ctx context.Context) error {
			_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(ctx, &v1alpha1.AgentTask{
				ObjectMeta: meta(name),
				Spec: v1alpha1.AgentTaskSpec{
					TaskID: name, UserID: "chaos", Image: "ghcr.io/opsnorth/agent:chaos",
					Input:      map[string]string{"KWOK_DELAY": b.taskDelay, "KWOK_TERMINATION_MESSAGE": `{"task":"` + name + `"}`},
					WebhookURL: b.rcv.url("/tasks/" + name),
				},
			}, metav1.CreateOptions{})
			return err
		})
	}
	for i := range b.workflows {
		name := b.workflowName(i)
		steps := make([]v1alpha1.WorkflowStep, b.steps)
		for s := range steps {
			steps[s] = v1alpha1.WorkflowStep{
				Name: fmt.Sprintf("s%d", s), Image: "ghcr.io/opsnorth/agent:chaos",
				Input: map[string]string{"KWOK_DELAY": b.stepDelay},
			}
		}
		wfJobs = append(wfJobs, func(ctx context.Context) error {
			_, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Create(ctx, &v1alpha1.Workflow{
				ObjectMeta: meta(name),
				Spec:       v1alpha1.WorkflowSpec{UserID: "chaos", Steps: steps, WebhookURL: b.rcv.url("/workflows/" + name)},
			}, metav1.CreateOptions{})
			return err
		})
	}
	jobs := interleave(taskJobs, wfJobs)
	halfCh, doneCh := make(chan struct{}), make(chan error, 1)
	b.created = time.Now()
	var (
		next, created atomic.Int64
		wg            sync.WaitGroup
		once          sync.Once
		firstErr      atomic.Pointer[error]
	)
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				if err := retryCreate(t.Context(), jobs[i]); err != nil {
					firstErr.CompareAndSwap(nil, &err)
				}
				if int(created.Add(1)) >= len(jobs)/2 {
					once.Do(func() { close(halfCh) })
				}
			}
		})
	}
	go func() {
		wg.Wait()
		once.Do(func() { close(halfCh) })
		if p := firstErr.Load(); p != nil {
			doneCh <- fmt.Errorf("create the burst: %w", *p)
			return
		}
		doneCh <- nil
	}()
	return halfCh, doneCh
}

// interleave spreads b evenly among a, so workflows and tasks are both in
// flight when the fault comes midway.
func interleave[T any](a, b []T) []T {
	out := make([]T, 0, len(a)+len(b))
	every := len(a)/max(len(b), 1) + 1
	for i, x := range a {
		out = append(out, x)
		if (i+1)%every == 0 && len(b) > 0 {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(out, b...)
}

// retryCreate calls create until it succeeds, finds the object already
// there (an earlier attempt got through), or a minute passes: a burst created
// across an apiserver restart loses nothing on the client side.
func retryCreate(ctx context.Context, create func(context.Context) error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := create(ctx)
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}
