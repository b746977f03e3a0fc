package render

// Children returns every child of a running or stopped app, in apply order:
// the ExternalSecret, then per service its ConfigMaps, PVC, Deployment,
// Service, HPA and ServiceMonitor, then the routes and the NetworkPolicy
// (each service's configuration before its workload, workloads before
// routes). A ServiceMonitor without its CRD is left out and a route without
// the IngressRoute CRD is an Ingress; secrets without the ExternalSecret CRD
// are an error because the pods would reference a Secret nobody creates, and
// so is a remote secret reference outside the user's prefix.
func Children(a *App, o Options, caps Capabilities) ([]Child, error) {
	var out []Child
	if len(a.UD.Spec.Secrets) > 0 {
		if !caps.ExternalSecret {
			return nil, ErrNoExternalSecrets
		}
		es, err := ExternalSecret(a, o)
		if err != nil {
			return nil, err
		}
		out = append(out, es)
	}
	for _, svc := range a.Services {
		out = append(out, ConfigMaps(a, svc)...)
		if c, ok := PVC(a, svc); ok {
			out = append(out, c)
		}
		d, err := Deployment(a, svc)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
		if c, ok := Service(a, svc); ok {
			out = append(out, c)
		}
		if c, ok := HPA(a, svc); ok {
			out = append(out, c)
		}
		if c, ok := ServiceMonitor(a, svc); ok && caps.ServiceMonitor {
			out = append(out, c)
		}
	}
	routes, err := Routes(a, o, caps)
	if err != nil {
		return nil, err
	}
	out = append(out, routes...)
	if o.NetworkPolicies {
		out = append(out, NetworkPolicy(a, o))
	}
	return out, nil
}
