package render

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func exposedPort(svc v1alpha1.TemplateService) (int32, bool) {
	for _, p := range svc.Ports {
		if p.Name == svc.Expose {
			return p.Port, true
		}
	}
	return 0, false
}

func ingressClass(vis v1alpha1.Visibility, o Options) string {
	if vis == v1alpha1.VisibilityInternal {
		return o.InternalIngressClass
	}
	return o.PublicIngressClass
}

// Routes returns, for every host of the app, a Traefik IngressRoute (when the
// CRD exists) or a networking.k8s.io/v1 Ingress.
func Routes(a *App, o Options, caps Capabilities) ([]Child, error) {
	byName := make(map[string]v1alpha1.TemplateService, len(a.Services))
	for _, s := range a.Services {
		byName[s.Name] = s
	}
	out := make([]Child, 0, len(a.Hosts))
	for _, h := range a.Hosts {
		svc := byName[h.Service]
		port, ok := exposedPort(svc)
		if !ok {
			return nil, fmt.Errorf("service %s exposes unknown port %q", svc.Name, svc.Expose)
		}
		if caps.IngressRoute {
			out = append(out, IngressRoute(a, o, h, port))
		} else {
			out = append(out, Ingress(a, o, h, port))
		}
	}
	return out, nil
}

// IngressRoute routes one host to a service through Traefik, with TLS from
// the certificate resolver.
func IngressRoute(a *App, o Options, h v1alpha1.IngressStatus, port int32) Child {
	name := WorkloadName(a.UD, h.Service)
	spec := map[string]any{
		"entryPoints": []any{o.IngressEntryPoint},
		"routes": []any{map[string]any{
			"match": fmt.Sprintf("Host(`%s`)", h.Host),
			"kind":  "Rule",
			"services": []any{map[string]any{
				"name": name,
				"port": int64(port),
			}},
		}},
	}
	if o.CertResolver != "" {
		spec["tls"] = map[string]any{"certResolver": o.CertResolver}
	} else {
		spec["tls"] = map[string]any{}
	}
	ann := OwnerAnnotations(a.UD)
	if class := ingressClass(h.Visibility, o); class != "" {
		ann["kubernetes.io/ingress.class"] = class
	}
	return Child{GVK: GVKIngressRoute, Namespace: a.Namespace, Name: name,
		Object: newUnstructured(GVKIngressRoute, a.Namespace, name, ServiceLabels(a.UD, h.Service), ann, spec)}
}

// Ingress routes one host to a service through the ingress class of its
// visibility; TLS uses the Secret <name>-tls.
func Ingress(a *App, o Options, h v1alpha1.IngressStatus, port int32) Child {
	name := WorkloadName(a.UD, h.Service)
	spec := networkingv1ac.IngressSpec().
		WithRules(networkingv1ac.IngressRule().WithHost(h.Host).WithHTTP(
			networkingv1ac.HTTPIngressRuleValue().WithPaths(networkingv1ac.HTTPIngressPath().
				WithPath("/").WithPathType(networkingv1.PathTypePrefix).
				WithBackend(networkingv1ac.IngressBackend().WithService(
					networkingv1ac.IngressServiceBackend().WithName(name).
						WithPort(networkingv1ac.ServiceBackendPort().WithNumber(port))))))).
		WithTLS(networkingv1ac.IngressTLS().WithHosts(h.Host).WithSecretName(Name(name, "tls")))
	if class := ingressClass(h.Visibility, o); class != "" {
		spec.WithIngressClassName(class)
	}
	return Child{GVK: GVKIngress, Namespace: a.Namespace, Name: name,
		Object: networkingv1ac.Ingress(name, a.Namespace).WithLabels(ServiceLabels(a.UD, h.Service)).
			WithAnnotations(OwnerAnnotations(a.UD)).WithSpec(spec)}
}

// ServiceMonitor scrapes a service's metrics port.
func ServiceMonitor(a *App, svc v1alpha1.TemplateService) (Child, bool) {
	m := svc.Metrics
	if m == nil {
		return Child{}, false
	}
	path := m.Path
	if path == "" {
		path = "/metrics"
	}
	return workload(a, svc).ServiceMonitor(m.Port, path, m.Interval), true
}
