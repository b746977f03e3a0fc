package deployments

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/deployments/inventory"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/tenancy"
)

// Setup registers the UserDeployment controller with deps.Manager: it
// watches UserDeployments and DeploymentTemplates through the generated
// informers, the children through label-selected informers of their kind,
// the apps' pods and claim events for what blocks a rollout (only when
// that changes: podHandler, claimEventHandler), and the host claims
// (setupHostClaims). It also adds the phase gauge, which reports once this
// replica is elected. The Agent controller (package agents) runs beside it.
func Setup(ctx context.Context, deps *manager.Deps, cfg Config) error {
	if err := agents.Setup(ctx, deps, agents.Config{Tiers: cfg.Tiers, DefaultMaxTier: cfg.DefaultMaxTier,
		NetworkPolicies: cfg.NetworkPolicies}); err != nil {
		return err
	}
	mgr := deps.Manager
	caps, resources, err := discover(mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	dynInf := newDynamicInformers(dyn, resources)
	if err := manager.AddInformerFactory(mgr, "third-party", dynInf.factory); err != nil {
		return err
	}

	factories := deps.Informers.Factories()
	r := &Reconciler{
		cfg:       cfg,
		caps:      caps,
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		reader:    &children.Reader{Listers: dynInf.listers},
		clientset: deps.Clientset,
		informers: deps.Informers,
		// DeploymentTemplates are cluster-scoped: any factory lists them all.
		templates: factories[0].Scheduler().V1alpha1().DeploymentTemplates().Lister(),
		recorder:  mgr.GetEventRecorder(deps.FieldOwner),
		owner:     deps.FieldOwner,
		now:       time.Now,
		kinds:     &inventory.Kinds{Discovery: disc, Now: time.Now},
	}
	r.apply = &applier{children.Applier{Client: mgr.GetClient(), Get: r.reader.Get, Owner: deps.FieldOwner}}
	r.buildPhases()
	registerMetrics()

	if r.bindings, err = tenancy.NewBindings(deps.Kube); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("userdeployment").WatchesRawSource(r.bindings.Synced())
	for _, f := range factories {
		inf := f.Scheduler().V1alpha1().UserDeployments().Informer()
		if err := inf.AddIndexers(indexers); err != nil {
			return fmt.Errorf("index UserDeployments: %w", err)
		}
		r.udInformers = append(r.udInformers, inf)
		b = b.WatchesRawSource(manager.Watch(inf, handler.EnqueueRequestsFromMapFunc(r.mapUserDeployment)))
	}
	tmpl := factories[0].Scheduler().V1alpha1().DeploymentTemplates().Informer()
	b = b.WatchesRawSource(manager.Watch(tmpl, handler.EnqueueRequestsFromMapFunc(r.mapTemplate)))
	var claims corelisters.PersistentVolumeClaimLister
	for gvk, kind := range builtinChildren {
		kind.Select = selectChildren
		inf, err := deps.Kube.AllNamespaces(kind)
		if err != nil {
			return err
		}
		r.reader.Listers[gvk] = toolscache.NewGenericLister(inf.GetIndexer(), kind.Resource.GroupResource())
		switch gvk {
		case render.GVKDeployment:
			r.deployments = appslisters.NewDeploymentLister(inf.GetIndexer())
		case render.GVKPVC:
			claims = corelisters.NewPersistentVolumeClaimLister(inf.GetIndexer())
		}
		b = b.WatchesRawSource(manager.Watch(inf, handler.EnqueueRequestsFromMapFunc(r.mapChild)))
	}
	claimSource, err := r.setupHostClaims(deps)
	if err != nil {
		return err
	}
	b = b.WatchesRawSource(claimSource)
	pods, err := deps.Kube.AllNamespaces(podKind)
	if err != nil {
		return err
	}
	events, err := deps.Kube.AllNamespaces(claimEventKind)
	if err != nil {
		return err
	}
	r.rollouts = &rollouts{pods: pods.GetIndexer(), claims: claims, events: events.GetIndexer()}
	b = b.WatchesRawSource(manager.Watch(pods, r.podHandler())).
		WatchesRawSource(manager.Watch(events, r.claimEventHandler()))
	for _, inf := range dynInf.informers {
		b = b.WatchesRawSource(manager.Watch(inf, handler.EnqueueRequestsFromMapFunc(r.mapChild)))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("build userdeployment controller: %w", err)
	}
	if err := mgr.Add(phaseReporter{gauge: phases, r: r}); err != nil {
		return fmt.Errorf("add phase gauge: %w", err)
	}
	ctrl.Log.WithName("deployments").Info("optional CRDs", "ingressRoute", caps.IngressRoute,
		"externalSecret", caps.ExternalSecret, "serviceMonitor", caps.ServiceMonitor)
	return nil
}

// Index names of the UserDeployment informers.
const (
	indexTemplate  = "template"
	indexUser      = "user"
	indexDependsOn = "dependsOn"
	indexKeyLabel  = "keyLabel"
)

var indexers = toolscache.Indexers{
	indexTemplate: func(obj any) ([]string, error) {
		if ud, ok := obj.(*v1alpha1.UserDeployment); ok && ud.Spec.Template != "" {
			return []string{ud.Spec.Template}, nil
		}
		return nil, nil
	},
	indexUser: func(obj any) ([]string, error) {
		if ud, ok := obj.(*v1alpha1.UserDeployment); ok {
			return []string{ud.Spec.UserID}, nil
		}
		return nil, nil
	},
	indexDependsOn: func(obj any) ([]string, error) {
		ud, ok := obj.(*v1alpha1.UserDeployment)
		if !ok {
			return nil, nil
		}
		out := make([]string, 0, len(ud.Spec.DependsOn))
		for _, d := range ud.Spec.DependsOn {
			out = append(out, ud.Namespace+"/"+d)
		}
		return out, nil
	},
	// The user-deployment label of the children: pods carry it, not the
	// owner annotation.
	indexKeyLabel: func(obj any) ([]string, error) {
		if ud, ok := obj.(*v1alpha1.UserDeployment); ok {
			return []string{render.KeyLabel(render.Key(ud))}, nil
		}
		return nil, nil
	},
}

// byIndex returns the UserDeployments of every informer under index=value.
func (r *Reconciler) byIndex(index, value string) []*v1alpha1.UserDeployment {
	var out []*v1alpha1.UserDeployment
	for _, inf := range r.udInformers {
		objs, err := inf.GetIndexer().ByIndex(index, value)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if ud, ok := o.(*v1alpha1.UserDeployment); ok {
				out = append(out, ud)
			}
		}
	}
	return out
}
