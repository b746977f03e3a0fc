package workflows

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/informers/externalversions"
	listers "opsnorth.io/scheduler/generated/listers/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Config is the workflows controller's own configuration.
type Config struct {
	// Namespaces whose Workflows are reconciled; empty means all.
	Namespaces manager.Namespaces
	// Webhook is how completion webhooks are delivered.
	Webhook webhook.Config
	// Budget bounds stored step outputs; zero means DefaultBudget.
	Budget Budget
}

// Setup registers the Workflow controller with deps.Manager: Workflows come
// from the shared scheduler informers, the workflows' AgentTasks from
// informers of its own that select on the workflow label, so AgentTasks of
// other origins are never cached here.
func Setup(_ context.Context, deps *manager.Deps, cfg Config) error {
	registerMetrics()
	if cfg.Budget == (Budget{}) {
		cfg.Budget = DefaultBudget
	}
	taskFactories, err := taskInformers(deps, cfg.Namespaces)
	if err != nil {
		return err
	}
	r := &Reconciler{
		workflows: func(ns string) listers.WorkflowNamespaceLister {
			return deps.Informers.For(ns).Scheduler().V1alpha1().Workflows().Lister().Workflows(ns)
		},
		tasks: func(ns string) listers.AgentTaskNamespaceLister {
			return taskFactories(ns).Scheduler().V1alpha1().AgentTasks().Lister().AgentTasks(ns)
		},
		client:     deps.Clientset,
		recorder:   deps.Manager.GetEventRecorder(deps.FieldOwner),
		fieldOwner: deps.FieldOwner,
		budget:     cfg.Budget,
		now:        time.Now,
		hops:       newHopTracker(),
	}
	r.deliveries = webhook.NewService(webhook.Options{
		Config: cfg.Webhook, Kind: "Workflow", Event: WebhookEvent,
		Secrets: deps.Manager.GetAPIReader(), Recorder: r.recorder, Subject: deliveries{r}, Now: r.now,
	})
	if err := deps.Manager.Add(r.deliveries); err != nil {
		return fmt.Errorf("add webhook delivery service: %w", err)
	}
	b := ctrl.NewControllerManagedBy(deps.Manager).Named("workflow")
	for _, f := range deps.Informers.Factories() {
		b = b.WatchesRawSource(&source.Informer{
			Informer: f.Scheduler().V1alpha1().Workflows().Informer(),
			Handler:  &handler.EnqueueRequestForObject{},
		})
	}
	for _, ns := range factoryNamespaces(cfg.Namespaces) {
		b = b.WatchesRawSource(&source.Informer{
			Informer: taskFactories(ns).Scheduler().V1alpha1().AgentTasks().Informer(),
			Handler:  taskHandler(r),
		})
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("build workflow controller: %w", err)
	}
	return nil
}

// factoryNamespaces are the namespaces with a factory; "" means all.
func factoryNamespaces(ns manager.Namespaces) []string {
	if ns.All() {
		return []string{metav1.NamespaceAll}
	}
	return ns
}

// taskInformers builds one AgentTask informer factory per watched namespace,
// listing only tasks that carry the workflow label, registers them with the
// manager and returns the factory for a namespace.
func taskInformers(deps *manager.Deps, namespaces manager.Namespaces) (func(string) externalversions.SharedInformerFactory, error) {
	req, err := labels.NewRequirement(labelkeys.Workflow, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("workflow label selector: %w", err)
	}
	tweak := externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labels.NewSelector().Add(*req).String()
	})
	byNamespace := map[string]externalversions.SharedInformerFactory{}
	for i, ns := range factoryNamespaces(namespaces) {
		f := externalversions.NewSharedInformerFactoryWithOptions(deps.Clientset, 0, externalversions.WithNamespace(ns), tweak)
		f.Scheduler().V1alpha1().AgentTasks().Informer()
		if err := manager.AddInformerFactory(deps.Manager, fmt.Sprintf("workflow-tasks-%d", i), f); err != nil {
			return nil, err
		}
		byNamespace[ns] = f
	}
	return func(ns string) externalversions.SharedInformerFactory {
		if f, ok := byNamespace[metav1.NamespaceAll]; ok {
			return f
		}
		return byNamespace[ns]
	}, nil
}

// taskHandler enqueues the Workflow that controls an AgentTask, records
// when a task is seen turning Succeeded (for the hop latency) and forgets
// deleted tasks.
func taskHandler(r *Reconciler) handler.EventHandler {
	hops := r.hops
	enqueue := func(obj metav1.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		ref := metav1.GetControllerOf(obj)
		if ref == nil || ref.Kind != "Workflow" || ref.APIVersion != v1alpha1.SchemeGroupVersion.String() {
			return
		}
		q.Add(reconcile.Request{NamespacedName: k8sName(obj.GetNamespace(), ref.Name)})
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			oldTask, okOld := e.ObjectOld.(*v1alpha1.AgentTask)
			newTask, okNew := e.ObjectNew.(*v1alpha1.AgentTask)
			if okOld && okNew && oldTask.Status.Phase != v1alpha1.TaskSucceeded && newTask.Status.Phase == v1alpha1.TaskSucceeded {
				hops.succeeded(newTask.UID, time.Now())
			}
			enqueue(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			hops.forget(e.Object.GetUID())
			r.created.Delete(k8sName(e.Object.GetNamespace(), e.Object.GetName()))
			enqueue(e.Object, q)
		},
	}
}
