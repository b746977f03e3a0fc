package tasks

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
)

// settledSelector selects the settled tasks: the ones retention may delete.
const settledSelector = "status.settled=true"

// collector deletes settled tasks at the end of their TTL, in the manner of
// the Job TTL controller. The manager caches unsettled tasks only, so the
// collector keeps no objects: a task is scheduled (its key, in a delaying
// queue) when its settled status is written, and on start every settled
// task is listed once, page by page, to schedule those an earlier leader
// left. Before each delete the task is read again: it must still be the
// settled task that was due, and the delete carries its UID.
type collector struct {
	clientset  versioned.Interface
	namespaces []string
	defaultTTL int32 // negative: keep tasks without a TTL of their own
	queue      workqueue.TypedDelayingInterface[types.NamespacedName]
	now        func() time.Time
}

func newCollector(cs versioned.Interface, namespaces []string, defaultTTL int32, now func() time.Time) *collector {
	return &collector{clientset: cs, namespaces: namespaces, defaultTTL: defaultTTL, now: now,
		queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[types.NamespacedName]{Name: "agenttask-retention"})}
}

// due returns when task is to be deleted; false for never: it is not
// settled, has no TTL, or belongs to a Workflow (it goes with it).
func (c *collector) due(task *v1alpha1.AgentTask) (time.Time, bool) {
	ttl := c.defaultTTL
	if task.Spec.TTLSecondsAfterSettled != nil {
		ttl = *task.Spec.TTLSecondsAfterSettled
	}
	if ttl < 0 || !task.Status.Settled || metav1.GetControllerOf(task) != nil {
		return time.Time{}, false
	}
	end := task.CreationTimestamp.Time
	if t := task.Status.CompletionTime; t != nil {
		end = t.Time
	}
	return end.Add(time.Duration(ttl) * time.Second), true
}

// schedule queues task for its delete, if it has one.
func (c *collector) schedule(task *v1alpha1.AgentTask) {
	if at, ok := c.due(task); ok {
		c.queue.AddAfter(types.NamespacedName{Namespace: task.Namespace, Name: task.Name}, at.Sub(c.now()))
	}
}

// Start schedules the settled tasks already stored, then deletes each
// queued task when it is due, until ctx ends. It runs on the leader only.
func (c *collector) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	log := ctrl.LoggerFrom(ctx).WithName("retention")
	if err := c.scheduleStored(ctx); err != nil {
		// The queue still serves what the reconciler schedules; the
		// tasks an earlier leader left wait for the next start.
		log.Error(err, "list settled tasks")
	}
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return nil
		}
		if err := c.collect(ctx, key); err != nil {
			log.Error(err, "collect settled task", "task", key)
			c.queue.AddAfter(key, 10*time.Second)
		}
		c.queue.Done(key)
	}
}

func (c *collector) scheduleStored(ctx context.Context) error {
	for _, ns := range c.namespaces {
		opts := metav1.ListOptions{FieldSelector: settledSelector, Limit: 500}
		for {
			list, err := c.clientset.SchedulerV1alpha1().AgentTasks(ns).List(ctx, opts)
			if err != nil {
				return fmt.Errorf("list settled agenttasks in %q: %w", ns, err)
			}
			for i := range list.Items {
				c.schedule(&list.Items[i])
			}
			if opts.Continue = list.Continue; opts.Continue == "" {
				break
			}
		}
	}
	return nil
}

// collect deletes the task named by key if it is (still) due.
func (c *collector) collect(ctx context.Context, key types.NamespacedName) error {
	tasks := c.clientset.SchedulerV1alpha1().AgentTasks(key.Namespace)
	task, err := tasks.Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get agenttask %s: %w", key, err)
	}
	at, ok := c.due(task)
	if !ok || task.DeletionTimestamp != nil {
		return nil
	}
	if wait := at.Sub(c.now()); wait > 0 {
		c.queue.AddAfter(key, wait)
		return nil
	}
	background := metav1.DeletePropagationBackground
	err = tasks.Delete(ctx, key.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &task.UID}, PropagationPolicy: &background})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil // gone, or a new task of that name
	case err != nil:
		return fmt.Errorf("delete agenttask %s: %w", key, err)
	}
	CollectedTotal.WithLabelValues(key.Namespace).Inc()
	ctrl.LoggerFrom(ctx).Info("deleted a settled task at the end of its TTL", "task", key, "completionTime", task.Status.CompletionTime)
	return nil
}
