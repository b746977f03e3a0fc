package render

import (
	"errors"
	"fmt"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
)

// RawServiceName and RawPortName name the single service and port of an app
// made from spec.image.
const (
	RawServiceName = "app"
	RawPortName    = "http"
)

// Options are the manager's settings the children depend on.
type Options struct {
	// Domain is the parent domain of hosts.
	Domain string
	// ClusterSecretStore is the ClusterSecretStore of ExternalSecrets.
	ClusterSecretStore string
	// SecretKeyPrefix is put before every remote secret key, with the
	// user's id in place of {userId} (see CheckSecretKeyPrefix).
	SecretKeyPrefix string
	// IngressEntryPoint is the Traefik entry point of IngressRoutes.
	IngressEntryPoint string
	// CertResolver is the Traefik certificate resolver for TLS.
	CertResolver string
	// PublicIngressClass and InternalIngressClass select the ingress
	// controller per visibility.
	PublicIngressClass   string
	InternalIngressClass string
	// IngressControllerNamespace is where the ingress controller's pods run.
	IngressControllerNamespace string
	// NetworkPolicies enables the NetworkPolicies.
	NetworkPolicies bool
}

// Capabilities are the optional CRDs installed in the cluster.
type Capabilities struct {
	IngressRoute   bool
	ExternalSecret bool
	ServiceMonitor bool
}

// App is a UserDeployment with its template resolved.
type App struct {
	UD        *v1alpha1.UserDeployment
	Services  []v1alpha1.TemplateService
	Tier      tiers.Tier
	Namespace string
	// Hosts are the URLs the app may serve (after the host-conflict check).
	Hosts []v1alpha1.IngressStatus
}

// Stopped reports whether the app runs no pods.
func (a *App) Stopped() bool { return a.UD.Spec.DesiredState == v1alpha1.DesiredStopped }

// Services resolves the template services of ud: the template's, or one
// service "app" serving spec.image on spec.containerPort, exposed.
func Services(ud *v1alpha1.UserDeployment, tmpl *v1alpha1.DeploymentTemplate) ([]v1alpha1.TemplateService, error) {
	if ud.Spec.Template != "" {
		if tmpl == nil {
			return nil, errors.New("template not resolved")
		}
		return tmpl.Spec.Services, nil
	}
	if ud.Spec.Image == "" || ud.Spec.ContainerPort == nil {
		return nil, errors.New("spec.image with spec.containerPort or spec.template is required")
	}
	one := int32(1)
	return []v1alpha1.TemplateService{{
		Name:   RawServiceName,
		Image:  ud.Spec.Image,
		Ports:  []v1alpha1.ServicePort{{Name: RawPortName, Port: *ud.Spec.ContainerPort, Protocol: "TCP"}},
		Expose: RawPortName,
		// A raw image gets one replica unless spec.replicas says otherwise.
		Replicas: &one,
	}}, nil
}

// Replicas is the replica count of a service; nil when an autoscaler owns it.
func Replicas(ud *v1alpha1.UserDeployment, svc v1alpha1.TemplateService) *int32 {
	zero := int32(0)
	switch {
	case ud.Spec.DesiredState == v1alpha1.DesiredStopped:
		return &zero
	case ud.Spec.Autoscaling != nil:
		return nil
	case ud.Spec.Replicas != nil:
		return ud.Spec.Replicas
	case svc.Replicas != nil:
		return svc.Replicas
	}
	one := int32(1)
	return &one
}

// CheckTier refuses replica counts, and container requests or limits, above
// the tier's maximums.
func CheckTier(ud *v1alpha1.UserDeployment, services []v1alpha1.TemplateService, t tiers.Tier) error {
	if as := ud.Spec.Autoscaling; as != nil && as.MaxReplicas > t.MaxReplicas {
		return fmt.Errorf("autoscaling.maxReplicas %d exceeds the %s tier's maximum of %d", as.MaxReplicas, ud.Spec.Tier, t.MaxReplicas)
	}
	for _, svc := range services {
		if r := Replicas(ud, svc); r != nil && *r > t.MaxReplicas {
			return fmt.Errorf("service %s: %d replicas exceed the %s tier's maximum of %d", svc.Name, *r, ud.Spec.Tier, t.MaxReplicas)
		}
		if svc.Resources == nil {
			continue
		}
		// The LimitRange would refuse the pods; say so on the deployment instead.
		for _, set := range []*v1alpha1.ResourceAmounts{svc.Resources.Requests, svc.Resources.Limits} {
			for name, q := range amounts(set) {
				if ceiling, ok := t.Max[name]; ok && q.Cmp(ceiling) > 0 {
					return fmt.Errorf("service %s: %s %s exceeds the %s tier's maximum of %s", svc.Name, name, q.String(), ud.Spec.Tier, ceiling.String())
				}
			}
		}
	}
	return nil
}

// Hosts returns the URLs of ud's exposed services: the first exposed service
// on <name>.<domain> (internal: <name>.int.<domain>), every other one on
// <name>-<service>.
func Hosts(ud *v1alpha1.UserDeployment, services []v1alpha1.TemplateService, domain string) []v1alpha1.IngressStatus {
	vis := ud.Spec.Visibility
	if vis == "" {
		vis = v1alpha1.VisibilityPublic
	}
	suffix := domain
	if vis == v1alpha1.VisibilityInternal {
		suffix = "int." + domain
	}
	var out []v1alpha1.IngressStatus
	for _, svc := range services {
		if svc.Expose == "" {
			continue
		}
		label := ud.Name
		if len(out) > 0 {
			label = Name(ud.Name, svc.Name)
		}
		host := label + "." + suffix
		out = append(out, v1alpha1.IngressStatus{Service: svc.Name, Host: host, URL: "https://" + host, Visibility: vis})
	}
	return out
}
