package deployments

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	schedacv1alpha1 "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	schedlisters "opsnorth.io/scheduler/generated/listers/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/deployments/inventory"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/tenancy"
)

// Reconciler provisions a UserDeployment's children in the user namespace
// and reports their state; see the package documentation.
type Reconciler struct {
	cfg         Config
	caps        render.Capabilities
	client      client.Client
	apiReader   client.Reader
	reader      *children.Reader
	deployments appslisters.DeploymentLister // the cached Deployments of reader
	rollouts    *rollouts                    // pods, claims and claim events, for what blocks a rollout
	claims      *hostClaims                  // who holds which host
	// running and deleting are the reconcile's checklists (buildPhases).
	running, deleting []manager.Phase[*scope]
	apply             *applier
	bindings          *tenancy.Bindings
	clientset         versioned.Interface
	informers         *manager.SchedulerInformers
	udInformers       []toolscache.SharedIndexInformer
	templates         schedlisters.DeploymentTemplateLister
	recorder          events.EventRecorder
	// kinds are the namespaced kinds an inventory lists.
	kinds *inventory.Kinds
	// settling holds, by namespace, when a release first saw objects in it
	// that may still go by themselves (see takeInventory).
	settling sync.Map
	owner    string
	now      func() time.Time
}

// scope is one reconcile's working state.
type scope struct {
	ud     *v1alpha1.UserDeployment
	status v1alpha1.UserDeploymentStatus
	app    *render.App
	// wrote is set when a child was applied or deleted.
	wrote bool
	// desired are this reconcile's desired children, whether they needed a
	// write or were already in place.
	desired []render.Child
	// failed is the reason this reconcile set phase error with, if it did.
	failed string
	// gone is set once the finalizer was removed: no status to write.
	gone bool
	// kept says why the user namespace was kept on release, if it was.
	kept string
	// requeue is when to look again although nothing changes: a phase that
	// waits on something no watch reports sets it.
	requeue time.Duration
}

// Reconcile runs the phases of a running, stopped or deleted deployment and
// writes the status once, when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	f := r.informers.For(req.Namespace)
	if f == nil {
		return ctrl.Result{}, nil
	}
	cached, err := f.Scheduler().V1alpha1().UserDeployments().Lister().UserDeployments(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("get UserDeployment %s: %w", req, err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("user", cached.Spec.UserID, "generation", cached.Generation)
	ctx = ctrl.LoggerInto(ctx, log)
	s := &scope{ud: cached.DeepCopy(), status: *cached.Status.DeepCopy()}
	s.status.Namespace = render.UserNamespace(r.cfg.NamespacePrefix, s.ud.Spec.UserID)

	phases := r.running
	if s.ud.DeletionTimestamp != nil || s.ud.Spec.DesiredState == v1alpha1.DesiredDeleted {
		phases = r.deleting
	}
	result, runErr := r.runPhases(ctx, s, phases)
	if s.gone {
		return result, runErr
	}
	if s.wrote {
		now := metav1.NewTime(r.now().Truncate(time.Second))
		s.status.LastReconcile = &now
		log.Info("changed children", "phase", s.status.Phase)
	}
	if err := r.writeStatus(ctx, cached, s); err != nil {
		return result, errors.Join(runErr, err)
	}
	// A wait for something to disappear asked for its own retry; a phase's
	// requeue comes on top, whichever is sooner.
	if runErr == nil && s.requeue > 0 && (result.RequeueAfter == 0 || s.requeue < result.RequeueAfter) {
		result.RequeueAfter = s.requeue
	}
	return result, runErr
}

// buildPhases names the reconcile's checklists once: one for an app that
// runs (or is stopped), one for an app being deleted.
func (r *Reconciler) buildPhases() {
	named := phaseMetrics.Named
	r.running = []manager.Phase[*scope]{named("ensureFinalizer", r.ensureFinalizer), named("checkTenant", r.checkTenant),
		named("resolveTemplate", r.resolveTemplate), named("resolveTier", r.resolveTier), named("checkSecrets", r.checkSecrets),
		named("checkDependencies", r.checkDependencies), named("checkHosts", r.checkHosts),
		named("ensureNamespace", r.ensureNamespace), named("applyChildren", r.applyChildren),
		named("pruneChildren", r.pruneChildren), named("releaseHostClaims", r.releaseHostClaims),
		named("observeRollout", r.observeRollout)}
	r.deleting = []manager.Phase[*scope]{named("deleteChildren", r.deleteChildren), named("releaseHostClaims", r.releaseHostClaims),
		named("releaseNamespace", r.releaseNamespace),
		named("markDeleted", r.markDeleted), named("removeFinalizer", r.removeFinalizer)}
}

// phaseMetrics times the reconcile's phases and counts their errors: a
// spec no retry satisfies (stalled) or a child another owner holds is a
// refusal, a wait for deleted objects no failure.
var phaseMetrics = manager.NewPhaseMetrics[*scope]("userdeployment", manager.PhaseErrors{
	Refused: func(err error) bool {
		_, st := errors.AsType[*stalledError](err)
		_, conflict := errors.AsType[*ConflictError](err)
		return st || conflict
	},
	Waiting: func(err error) bool { _, ok := errors.AsType[*waitingError](err); return ok },
})

// runPhases runs phases in order until one stops or fails, then counts the
// reconcile if it ended in phase error.
func (r *Reconciler) runPhases(ctx context.Context, s *scope, phases []manager.Phase[*scope]) (ctrl.Result, error) {
	var result ctrl.Result
	var runErr error
	if err := manager.RunPhases(ctx, s, phases...); err != nil {
		result, runErr = r.onError(ctx, s, err)
	}
	if s.failed != "" {
		reconcileErrors.WithLabelValues(s.failed).Inc()
	}
	return result, runErr
}

// ensureFinalizer adds the cleanup finalizer with server-side apply.
func (r *Reconciler) ensureFinalizer(ctx context.Context, s *scope) (bool, error) {
	if controllerutil.ContainsFinalizer(s.ud, Finalizer) {
		return false, nil
	}
	ac := schedacv1alpha1.UserDeployment(s.ud.Name, s.ud.Namespace).WithUID(s.ud.UID).WithFinalizers(Finalizer)
	updated, err := r.clientset.SchedulerV1alpha1().UserDeployments(s.ud.Namespace).Apply(ctx, ac,
		metav1.ApplyOptions{FieldManager: r.owner, Force: true})
	if err != nil {
		return false, fmt.Errorf("add finalizer: %w", err)
	}
	// The status write at the end is conditional on this version.
	s.ud.ResourceVersion = updated.ResourceVersion
	return false, nil
}

// removeFinalizer lets a deleted UserDeployment go once its children are gone.
func (r *Reconciler) removeFinalizer(ctx context.Context, s *scope) (bool, error) {
	if s.ud.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(s.ud, Finalizer) {
		return false, nil
	}
	ac := schedacv1alpha1.UserDeployment(s.ud.Name, s.ud.Namespace).WithUID(s.ud.UID)
	// The UID makes the apply fail rather than recreate an object that is
	// already gone (a second reconcile racing the first's removal): a
	// conflict or not-found means the job is done.
	_, err := r.clientset.SchedulerV1alpha1().UserDeployments(s.ud.Namespace).Apply(ctx, ac,
		metav1.ApplyOptions{FieldManager: r.owner, Force: true})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return false, fmt.Errorf("remove finalizer: %w", err)
	}
	s.gone = true
	return true, nil
}
