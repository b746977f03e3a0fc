package deployments

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"

	"opsnorth.io/scheduler/pkg/deployments/render"
)

// optionalKinds are the third-party kinds used when their CRD is installed.
var optionalKinds = []schema.GroupVersionKind{render.GVKIngressRoute, render.GVKExternalSecret, render.GVKServiceMonitor}

// discover reports which optional CRDs are installed, with their resources.
func discover(mapper meta.RESTMapper) (render.Capabilities, map[schema.GroupVersionKind]schema.GroupVersionResource, error) {
	found := map[schema.GroupVersionKind]schema.GroupVersionResource{}
	for _, gvk := range optionalKinds {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return render.Capabilities{}, nil, fmt.Errorf("discover %s: %w", gvk, err)
		}
		found[gvk] = m.Resource
	}
	_, ir := found[render.GVKIngressRoute]
	_, es := found[render.GVKExternalSecret]
	_, sm := found[render.GVKServiceMonitor]
	return render.Capabilities{IngressRoute: ir, ExternalSecret: es, ServiceMonitor: sm}, found, nil
}

// dynamicInformers are label-filtered informers of the installed optional
// kinds; controller-runtime's cache cannot be told about kinds that may be
// missing when the manager is built. The factory runs like every other
// informer factory (manager.AddInformerFactory).
type dynamicInformers struct {
	factory   dynamicinformer.DynamicSharedInformerFactory
	informers map[schema.GroupVersionKind]toolscache.SharedIndexInformer
	listers   map[schema.GroupVersionKind]toolscache.GenericLister
}

func newDynamicInformers(client dynamic.Interface, resources map[schema.GroupVersionKind]schema.GroupVersionResource) *dynamicInformers {
	sel := ChildSelector().String()
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.LabelSelector = sel })
	d := &dynamicInformers{factory: f, informers: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{},
		listers: map[schema.GroupVersionKind]toolscache.GenericLister{}}
	for gvk, gvr := range resources {
		inf := f.ForResource(gvr)
		d.informers[gvk] = inf.Informer()
		d.listers[gvk] = inf.Lister()
	}
	return d
}
