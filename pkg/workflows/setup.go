package workflows

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/generated/informers/externalversions/internalinterfaces"
	informers "opsnorth.io/scheduler/generated/informers/externalversions/scheduler/v1alpha1"
	listers "opsnorth.io/scheduler/generated/listers/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/tenancy"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Config is the workflows controller's own configuration.
type Config struct {
	// Webhook is how completion webhooks are delivered.
	Webhook webhook.Config
	// Budget bounds stored step outputs; zero means DefaultBudget.
	Budget Budget
	// DefaultTTLSecondsAfterFinished keeps a finished workflow without a
	// ttlSecondsAfterFinished of its own this long; negative keeps it.
	DefaultTTLSecondsAfterFinished int32
}

// Setup registers the Workflow controller with deps.Manager. Workflows and
// their AgentTasks come from the shared scheduler informers; the AgentTask
// informers select on the workflow label, so AgentTasks of other origins
// are never cached here.
func Setup(ctx context.Context, deps *manager.Deps, cfg Config) error {
	registerMetrics()
	if cfg.Budget == (Budget{}) {
		cfg.Budget = DefaultBudget
	}
	taskInformers := deps.Informers.InformersFor(&v1alpha1.AgentTask{}, workflowTasks)
	r := &Reconciler{
		workflows: func(ns string) listers.WorkflowNamespaceLister {
			return deps.Informers.For(ns).Scheduler().V1alpha1().Workflows().Lister().Workflows(ns)
		},
		tasks: func(ns string) listers.AgentTaskNamespaceLister {
			return deps.Informers.For(ns).Scheduler().V1alpha1().AgentTasks().Lister().AgentTasks(ns)
		},
		client:     deps.Clientset,
		recorder:   deps.Manager.GetEventRecorder(deps.FieldOwner),
		fieldOwner: deps.FieldOwner,
		budget:     cfg.Budget,
		defaultTTL: cfg.DefaultTTLSecondsAfterFinished,
		now:        time.Now,
		hops:       newHopTracker(),
	}
	r.phases = []manager.Phase[*scope]{phaseMetrics.Named("observeTasks", r.observeTasks),
		phaseMetrics.Named("startSteps", r.startSteps), phaseMetrics.Named("webhookCondition", r.webhookCondition)}
	keyNamespace := deps.Options.LeaderElectionNamespace
	if keyNamespace == "" {
		keyNamespace = metav1.NamespaceDefault
	}
	cs, err := kubernetes.NewForConfig(deps.Manager.GetConfig())
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if r.signer, err = loadStepSigner(ctx, cs, keyNamespace); err != nil {
		return err
	}
	r.deliveries = webhook.NewService(webhook.Options{
		Config: cfg.Webhook, Kind: "Workflow", Event: WebhookEvent,
		Secrets: deps.Manager.GetAPIReader(), Recorder: r.recorder, Subject: deliveries{r}, Now: r.now,
	})
	if err := deps.Manager.Add(r.deliveries); err != nil {
		return fmt.Errorf("add webhook delivery service: %w", err)
	}
	bindings, err := tenancy.NewBindings(deps.Kube)
	if err != nil {
		return err
	}
	r.bindings = bindings
	b := ctrl.NewControllerManagedBy(deps.Manager).Named(controllerName).WatchesRawSource(bindings.Synced())
	for _, f := range deps.Informers.Factories() {
		b = b.WatchesRawSource(manager.Watch(f.Scheduler().V1alpha1().Workflows().Informer(), &handler.EnqueueRequestForObject{}))
	}
	for _, inf := range taskInformers {
		b = b.WatchesRawSource(manager.Watch(inf, taskHandler(r)))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("build workflow controller: %w", err)
	}
	if err := deps.Manager.Add(stateGauges.Reporter(collectStates(deps.Informers.Factories(), r.now))); err != nil {
		return fmt.Errorf("add workflow state gauges: %w", err)
	}
	return nil
}

// workflowTasks builds the AgentTask informer of namespace ("" for all) on
// the tasks that carry the workflow label: step tasks, and any task that
// claims to be one (the controller checks its owner).
func workflowTasks(namespace string) internalinterfaces.NewInformerFunc {
	return func(cs versioned.Interface, resync time.Duration) toolscache.SharedIndexInformer {
		return informers.NewFilteredAgentTaskInformer(cs, namespace, resync,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc},
			func(o *metav1.ListOptions) { o.LabelSelector = labelkeys.Workflow })
	}
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
