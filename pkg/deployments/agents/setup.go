package agents

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	appslisters "k8s.io/client-go/listers/apps/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// Setup registers the Agent controller with deps.Manager: it watches Agents
// through the generated informers (indexed by their agent id and the ids
// they depend on), and the children through informers selected by the
// children's labels: built-in kinds from deps.Kube, the ServiceMonitor, when
// its CRD is installed, from a dynamic factory of its own. The Agents' pods
// are cached trimmed and watched for what keeps them from running ready
// (only when that changes: podHandler); the namespaces for a change of
// their max-tier label, and the tier quotas and limit ranges for a change.
func Setup(_ context.Context, deps *manager.Deps, cfg Config) error {
	mgr := deps.Manager
	agentKind := ossav1.SchemeGroupVersion.WithKind("Agent")
	if _, err := mgr.GetRESTMapper().RESTMapping(agentKind.GroupKind(), agentKind.Version); err != nil {
		return fmt.Errorf("the Agent CRD (manifests/crd/ossa.ai_agents.yaml) must be installed: %w", err)
	}
	monitors, err := serviceMonitorResource(mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	r := &Reconciler{
		client:         mgr.GetClient(),
		apiReader:      mgr.GetAPIReader(),
		reader:         &children.Reader{Listers: map[schema.GroupVersionKind]toolscache.GenericLister{}},
		serviceMonitor: monitors != nil,
		clientset:      deps.Clientset,
		informers:      deps.Informers,
		recorder:       mgr.GetEventRecorder(deps.FieldOwner),
		owner:          deps.FieldOwner,
		cfg:            cfg,
	}
	r.apply = &children.Applier{Client: mgr.GetClient(), Get: r.getChild, Owner: deps.FieldOwner}
	r.tierApply = &children.Applier{Client: mgr.GetClient(), Get: r.reader.Get, Owner: deps.FieldOwner}
	r.buildPhases()

	b := ctrl.NewControllerManagedBy(mgr).Named("agent")
	for _, f := range deps.Informers.Factories() {
		inf := f.Ossa().V1().Agents().Informer()
		if err := inf.AddIndexers(toolscache.Indexers{indexDependsOn: dependsOn, indexAgentID: agentID}); err != nil {
			return fmt.Errorf("index Agents: %w", err)
		}
		r.agentInformers = append(r.agentInformers, inf)
		b = b.WatchesRawSource(manager.Watch(inf, handler.EnqueueRequestsFromMapFunc(r.mapAgent)))
	}
	for gvk, kind := range builtinChildren {
		kind.Select = selectChildren
		inf, err := deps.Kube.AllNamespaces(kind)
		if err != nil {
			return err
		}
		r.reader.Listers[gvk] = toolscache.NewGenericLister(inf.GetIndexer(), kind.Resource.GroupResource())
		if gvk == render.GVKDeployment {
			r.deployments = appslisters.NewDeploymentLister(inf.GetIndexer())
		}
		b = b.WatchesRawSource(manager.Watch(inf, handler.EnqueueRequestsFromMapFunc(mapChild)))
	}
	pods, err := deps.Kube.AllNamespaces(podKind)
	if err != nil {
		return err
	}
	r.pods = pods.GetIndexer()
	b = b.WatchesRawSource(manager.Watch(pods, podHandler()))
	if b, err = r.watchTiers(deps, b); err != nil {
		return err
	}
	if monitors != nil {
		if b, err = r.watchServiceMonitors(deps, b, *monitors); err != nil {
			return err
		}
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("build agent controller: %w", err)
	}
	ctrl.Log.WithName("agents").Info("optional CRDs", "serviceMonitor", r.serviceMonitor)
	return nil
}

// watchTiers caches and watches the namespaces' max-tier labels and the
// tier quotas and limit ranges.
func (r *Reconciler) watchTiers(deps *manager.Deps, b *builder.TypedBuilder[ctrl.Request]) (*builder.TypedBuilder[ctrl.Request], error) {
	ns, err := deps.Kube.AllNamespaces(namespaceKind)
	if err != nil {
		return nil, err
	}
	r.namespaces = ns.GetStore()
	b = b.WatchesRawSource(manager.Watch(ns, manager.NewsHandler(r.mapNamespace, maxTierNews)))
	for gvk, kind := range map[schema.GroupVersionKind]manager.KubeKind{render.GVKResourceQuota: quotaKind,
		render.GVKLimitRange: limitRangeKind} {
		inf, err := deps.Kube.AllNamespaces(kind)
		if err != nil {
			return nil, err
		}
		r.reader.Listers[gvk] = toolscache.NewGenericLister(inf.GetIndexer(), kind.Resource.GroupResource())
		b = b.WatchesRawSource(manager.Watch(inf, manager.NewsHandler(r.mapTierObject, tierObjectNews)))
	}
	return b, nil
}

// watchServiceMonitors caches and watches the Agents' ServiceMonitors.
func (r *Reconciler) watchServiceMonitors(deps *manager.Deps, b *builder.TypedBuilder[ctrl.Request],
	gvr schema.GroupVersionResource) (*builder.TypedBuilder[ctrl.Request], error) {
	dyn, err := dynamic.NewForConfig(deps.Manager.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, selectChildren)
	inf := f.ForResource(gvr)
	r.reader.Listers[render.GVKServiceMonitor] = inf.Lister()
	if err := manager.AddInformerFactory(deps.Manager, "agent-third-party", f); err != nil {
		return nil, err
	}
	return b.WatchesRawSource(manager.Watch(inf.Informer(), handler.EnqueueRequestsFromMapFunc(mapChild))), nil
}

// serviceMonitorResource is the ServiceMonitor resource when
// prometheus-operator's CRD is installed, nil otherwise (the discovery the
// UserDeployment controller does at start).
func serviceMonitorResource(mapper meta.RESTMapper) (*schema.GroupVersionResource, error) {
	gvk := render.GVKServiceMonitor
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", gvk, err)
	}
	return &m.Resource, nil
}

// ChildSelector matches the children of every Agent: the caches and
// watches hold nothing else.
func ChildSelector() labels.Selector {
	managed, _ := labels.NewRequirement(labelkeys.ManagedBy, selection.Equals, []string{labelkeys.ManagedByValue})
	agent, _ := labels.NewRequirement(labelkeys.Agent, selection.Exists, nil)
	return labels.NewSelector().Add(*managed, *agent)
}

func selectChildren(o *metav1.ListOptions) { o.LabelSelector = ChildSelector().String() }

// builtinChildren are the built-in kinds of children, cached in every
// namespace, each selected with selectChildren.
var builtinChildren = map[schema.GroupVersionKind]manager.KubeKind{
	render.GVKConfigMap:  {Object: &corev1.ConfigMap{}, Resource: corev1.SchemeGroupVersion.WithResource("configmaps")},
	render.GVKService:    {Object: &corev1.Service{}, Resource: corev1.SchemeGroupVersion.WithResource("services")},
	render.GVKDeployment: {Object: &appsv1.Deployment{}, Resource: appsv1.SchemeGroupVersion.WithResource("deployments")},
	render.GVKHPA: {Object: &autoscalingv2.HorizontalPodAutoscaler{},
		Resource: autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")},
	render.GVKNetworkPolicy: {Object: &networkingv1.NetworkPolicy{},
		Resource: networkingv1.SchemeGroupVersion.WithResource("networkpolicies")},
}
