package render

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

const (
	filesVolume = "config-files"
	dataVolume  = "data"
)

// WorkloadName names a service's Deployment, Service, HPA, ServiceMonitor and routes.
func WorkloadName(ud *v1alpha1.UserDeployment, service string) string { return Name(ud.Name, service) }

// PVCName names a service's volume claim.
func PVCName(ud *v1alpha1.UserDeployment, service string) string {
	return Name(ud.Name, service, "data")
}

// Deployment runs one template service with a restricted security context.
func Deployment(a *App, svc v1alpha1.TemplateService) (Child, error) {
	c, err := container(a, svc)
	if err != nil {
		return Child{}, err
	}
	pod := RestrictedPod(c)
	if files := Files(a.UD, svc.Name); len(files) > 0 {
		pod.WithVolumes(corev1ac.Volume().WithName(filesVolume).
			WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(FilesConfigMapName(a.UD, svc.Name))))
	}
	strategy := appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType)
	if svc.Storage != nil {
		pod.WithVolumes(corev1ac.Volume().WithName(dataVolume).
			WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(PVCName(a.UD, svc.Name))))
		// A ReadWriteOnce volume cannot be attached to old and new pods at once.
		strategy = appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)
	}
	w := workload(a, svc)
	spec := appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(a.UD, svc.Name))).
		WithStrategy(strategy).
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(ServiceLabels(a.UD, svc.Name)).
			WithAnnotations(map[string]string{AnnotationConfigHash: ConfigHash(a.UD, svc)}).
			WithSpec(pod))
	if r := Replicas(a.UD, svc); r != nil {
		spec.WithReplicas(*r)
	}
	return w.Deployment(spec), nil
}

func container(a *App, svc v1alpha1.TemplateService) (*corev1ac.ContainerApplyConfiguration, error) {
	c := RestrictedContainer(svc.Name, svc.Image)
	if len(svc.Command) > 0 {
		c.WithCommand(svc.Command...)
	}
	if len(svc.Args) > 0 {
		c.WithArgs(svc.Args...)
	}
	for _, p := range svc.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		c.WithPorts(corev1ac.ContainerPort().WithName(p.Name).WithContainerPort(p.Port).WithProtocol(proto))
	}
	if len(Env(a.UD, svc)) > 0 {
		c.WithEnvFrom(corev1ac.EnvFromSource().WithConfigMapRef(
			corev1ac.ConfigMapEnvSource().WithName(EnvConfigMapName(a.UD, svc.Name))))
	}
	if len(a.UD.Spec.Secrets) > 0 {
		c.WithEnvFrom(corev1ac.EnvFromSource().WithSecretRef(corev1ac.SecretEnvSource().WithName(SecretName(a.UD))))
	}
	for _, f := range Files(a.UD, svc.Name) {
		c.WithVolumeMounts(corev1ac.VolumeMount().WithName(filesVolume).WithMountPath(f.Path).WithSubPath(f.Key).WithReadOnly(true))
	}
	if svc.Storage != nil {
		c.WithVolumeMounts(corev1ac.VolumeMount().WithName(dataVolume).WithMountPath(svc.Storage.MountPath))
	}
	if r := svc.Resources; r != nil {
		c.WithResources(corev1ac.ResourceRequirements().WithRequests(amounts(r.Requests)).WithLimits(amounts(r.Limits)))
	}
	for _, p := range []struct {
		probe *corev1.Probe
		set   func(*corev1ac.ProbeApplyConfiguration) *corev1ac.ContainerApplyConfiguration
	}{{svc.ReadinessProbe, c.WithReadinessProbe}, {svc.LivenessProbe, c.WithLivenessProbe}} {
		if p.probe == nil {
			continue
		}
		ac, err := probe(p.probe)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", svc.Name, err)
		}
		p.set(ac)
	}
	return c, nil
}

func amounts(a *v1alpha1.ResourceAmounts) corev1.ResourceList {
	out := corev1.ResourceList{}
	if a == nil {
		return out
	}
	if a.CPU != nil {
		out[corev1.ResourceCPU] = *a.CPU
	}
	if a.Memory != nil {
		out[corev1.ResourceMemory] = *a.Memory
	}
	if a.EphemeralStorage != nil {
		out[corev1.ResourceEphemeralStorage] = *a.EphemeralStorage
	}
	for name, q := range a.Extended {
		out[corev1.ResourceName(name)] = q
	}
	return out
}

// probe converts a core probe to its applyconfiguration (same JSON shape).
func probe(p *corev1.Probe) (*corev1ac.ProbeApplyConfiguration, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode probe: %w", err)
	}
	out := &corev1ac.ProbeApplyConfiguration{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("decode probe: %w", err)
	}
	return out, nil
}

// Service exposes a template service's ports; services without ports get none.
func Service(a *App, svc v1alpha1.TemplateService) (Child, bool) {
	if len(svc.Ports) == 0 {
		return Child{}, false
	}
	typ := corev1.ServiceType(svc.ServiceType)
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	var ports []*corev1ac.ServicePortApplyConfiguration
	for _, p := range svc.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		ports = append(ports, corev1ac.ServicePort().WithName(p.Name).WithPort(p.Port).
			WithTargetPort(intstr.FromString(p.Name)).WithProtocol(proto))
	}
	return workload(a, svc).Service(typ, ports...), true
}

// PVC is the volume claim of a service with storage.
func PVC(a *App, svc v1alpha1.TemplateService) (Child, bool) {
	if svc.Storage == nil {
		return Child{}, false
	}
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce).
		WithResources(corev1ac.VolumeResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceStorage: svc.Storage.Size}))
	if svc.Storage.StorageClassName != nil {
		spec.WithStorageClassName(*svc.Storage.StorageClassName)
	}
	name := PVCName(a.UD, svc.Name)
	ann := OwnerAnnotations(a.UD)
	ann[AnnotationWhenDeleted] = string(ClaimPolicy(svc.Storage))
	return Child{GVK: GVKPVC, Namespace: a.Namespace, Name: name,
		Object: corev1ac.PersistentVolumeClaim(name, a.Namespace).WithLabels(ServiceLabels(a.UD, svc.Name)).
			WithAnnotations(ann).WithSpec(spec)}, true
}

// AnnotationWhenDeleted on a volume claim is its storage.whenDeleted, so
// the manager knows it when the app (and with it the template) is gone.
const AnnotationWhenDeleted = labelkeys.Prefix + "when-deleted"

// ClaimPolicy is the storage's retention policy, Retain when unset.
func ClaimPolicy(st *v1alpha1.Storage) v1alpha1.ClaimRetention {
	if st == nil || st.WhenDeleted == "" {
		return v1alpha1.ClaimRetain
	}
	return st.WhenDeleted
}

// Retained reports whether a claim with these annotations is kept when its
// app no longer uses it: anything but an explicit Delete, so claims made
// before the policy existed are kept too.
func Retained(annotations map[string]string) bool {
	return annotations[AnnotationWhenDeleted] != string(v1alpha1.ClaimDelete)
}

// HPA scales a service on CPU when autoscaling is set and the app runs.
func HPA(a *App, svc v1alpha1.TemplateService) (Child, bool) {
	as := a.UD.Spec.Autoscaling
	if as == nil || a.Stopped() {
		return Child{}, false
	}
	target := as.TargetCPUUtilizationPercentage
	if target == 0 {
		target = 80
	}
	ref := autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").
		WithName(WorkloadName(a.UD, svc.Name))
	return workload(a, svc).HPA(ref, as.MinReplicas, as.MaxReplicas, UtilizationMetric(corev1.ResourceCPU, target)), true
}

// workload names the children of one template service.
func workload(a *App, svc v1alpha1.TemplateService) Workload {
	return Workload{Namespace: a.Namespace, Name: WorkloadName(a.UD, svc.Name), Labels: ServiceLabels(a.UD, svc.Name),
		Annotations: OwnerAnnotations(a.UD), Selector: SelectorLabels(a.UD, svc.Name)}
}
