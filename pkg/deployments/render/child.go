package render

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Group/version/kinds of the children.
var (
	GVKNamespace      = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	GVKResourceQuota  = schema.GroupVersionKind{Version: "v1", Kind: "ResourceQuota"}
	GVKLimitRange     = schema.GroupVersionKind{Version: "v1", Kind: "LimitRange"}
	GVKConfigMap      = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	GVKService        = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	GVKPVC            = schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}
	GVKDeployment     = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	GVKHPA            = schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}
	GVKNetworkPolicy  = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}
	GVKIngress        = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}
	GVKIngressRoute   = schema.GroupVersionKind{Group: "traefik.io", Version: "v1alpha1", Kind: "IngressRoute"}
	GVKExternalSecret = schema.GroupVersionKind{Group: "external-secrets.io", Version: "v1", Kind: "ExternalSecret"}
	GVKServiceMonitor = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
)

// AppKinds are the kinds of a UserDeployment's own children; the per-user
// namespace, quota and limit range are not among them. Children returns them
// in apply order.
var AppKinds = []schema.GroupVersionKind{
	GVKConfigMap, GVKExternalSecret, GVKPVC, GVKDeployment, GVKService, GVKHPA,
	GVKServiceMonitor, GVKIngressRoute, GVKIngress, GVKNetworkPolicy,
}

// Child is one desired object: a typed applyconfiguration or an
// *unstructured.Unstructured.
type Child struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	Object    any
}

// Unstructured converts the child to unstructured form (integers as int64,
// as the apiserver decodes them), the form the
// manager hashes, compares and applies.
func (c Child) Unstructured() (*unstructured.Unstructured, error) {
	if u, ok := c.Object.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	data, err := json.Marshal(c.Object)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", c.GVK.Kind, c.Name, err)
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", c.GVK.Kind, c.Name, err)
	}
	return u, nil
}

func newUnstructured(gvk schema.GroupVersionKind, namespace, name string, lbls, annotations map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(lbls)
	u.SetAnnotations(annotations)
	return u
}

// ErrNoExternalSecrets is returned when secrets are requested but the
// ExternalSecret CRD is not installed.
var ErrNoExternalSecrets = errors.New("spec.secrets needs the external-secrets.io/v1 ExternalSecret CRD, which is not installed")
