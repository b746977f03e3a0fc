package agents

import (
	"context"
	"errors"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	appslisters "k8s.io/client-go/listers/apps/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/manager"
)

// Reconciler runs Agents as Deployments; see the package documentation.
type Reconciler struct {
	// client applies and deletes children; apiReader reads a child the
	// cache does not hold (is the name free?).
	client    client.Client
	apiReader client.Reader
	// reader holds the label-selected caches of the children.
	reader      *children.Reader
	deployments appslisters.DeploymentLister
	// pods caches the Agents' unfinished pods, trimmed (podKind), by
	// podAgentIndex: what keeps them from running ready.
	pods toolscache.Indexer
	// namespaces caches every namespace's max-tier label (keepMaxTier).
	namespaces toolscache.Store
	apply      *children.Applier
	// tierApply applies the namespace's tier quota and limit range, read
	// from their cache only, as the UserDeployment controller does.
	tierApply *children.Applier
	cfg       Config
	// serviceMonitor is set when prometheus-operator's CRD is installed.
	serviceMonitor bool
	clientset      versioned.Interface
	informers      *manager.SchedulerInformers
	agentInformers []toolscache.SharedIndexInformer
	recorder       events.EventRecorder
	owner          string
	phases         []manager.Phase[*scope]
	// checked holds, per Agent (types.NamespacedName), the checkedCaps
	// that last passed resolve.Capabilities (costly: up to a second of CPU).
	checked sync.Map
}

// checkedCaps is an Agent's capabilities that passed the schema check.
type checkedCaps struct {
	uid  types.UID
	hash string
}

// scope is one reconcile's working state.
type scope struct {
	agent  *ossav1.Agent
	status ossav1.AgentStatus
	// running is set when the Agent's Deployment exists: a dependency that
	// goes unready no longer stops it.
	running bool
	// unmet says why the required dependencies are not met while the
	// agent runs anyway.
	unmet   string
	desired []render.Child
	// peers are the Agents of its namespace, itself among them.
	peers []*ossav1.Agent
	// tierName and tier are its namespace's tier (checkTier).
	tierName string
	tier     tiers.Tier
	// wrote is set when a child was applied or deleted.
	wrote bool
	// stallReason is the Stalled condition's reason when stalled.
	stallReason string
}

// Reconcile runs the Agent's phases and writes its status once, when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	f := r.informers.For(req.Namespace)
	if f == nil {
		return ctrl.Result{}, nil
	}
	cached, err := f.Ossa().V1().Agents().Lister().Agents(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		r.checked.Delete(req.NamespacedName)
		return ctrl.Result{}, nil // the garbage collector deletes the children
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("get Agent %s: %w", req, err)
	}
	if cached.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // being deleted (foreground): nothing to run
	}
	log := ctrl.LoggerFrom(ctx).WithValues("agent", cached.Spec.Agent.ID, "generation", cached.Generation)
	ctx = ctrl.LoggerInto(ctx, log)
	s := &scope{agent: cached.DeepCopy(), status: *cached.Status.DeepCopy()}
	var result ctrl.Result
	runErr := manager.RunPhases(ctx, s, r.phases...)
	if runErr != nil {
		result, runErr = r.onError(ctx, s, runErr)
	}
	if s.wrote {
		log.Info("changed children", "phase", s.status.Phase)
	}
	if err := r.writeStatus(ctx, cached, s); err != nil {
		return result, errors.Join(runErr, err)
	}
	return result, runErr
}

// buildPhases names the reconcile's checklist once.
func (r *Reconciler) buildPhases() {
	named := phaseMetrics.Named
	r.phases = []manager.Phase[*scope]{named("checkRuntime", r.checkRuntime),
		named("checkCapabilities", r.checkCapabilities), named("checkTier", r.checkTier),
		named("resolveDependencies", r.resolveDependencies), named("applyTierObjects", r.applyTierObjects),
		named("applyChildren", r.applyChildren), named("pruneChildren", r.pruneChildren),
		named("observeRollout", r.observeRollout)}
}

// phaseMetrics times the reconcile's phases and counts their errors: a
// spec no retry satisfies or a child another owner holds is a refusal.
var phaseMetrics = manager.NewPhaseMetrics[*scope]("agent", manager.PhaseErrors{
	Refused: func(err error) bool {
		_, st := errors.AsType[*stalledError](err)
		_, conflict := errors.AsType[*children.ConflictError](err)
		return st || conflict
	},
})

// deployment returns the Agent's cached Deployment, nil when it has none
// (a Deployment of that name another owner controls is not its own).
func (r *Reconciler) deployment(a *ossav1.Agent) (*appsv1.Deployment, error) {
	d, err := r.deployments.Deployments(a.Namespace).Get(a.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get Deployment %s/%s: %w", a.Namespace, a.Name, err)
	}
	if !ownedBy(d, a) {
		return nil, nil
	}
	return d, nil
}
