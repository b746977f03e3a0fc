package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
)

// managerNS is the managers' own namespace, as the packaging names it.
const managerNS = "opsnorth-system"

// fenceClient is a client as user with system:masters (so RBAC never
// decides), or as the admin for an empty user.
func fenceClient(t *testing.T, env *testenv.Env, user string) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, schedulerv1alpha1.AddToScheme(scheme))
	require.NoError(t, ossav1.AddToScheme(scheme))
	cfg := env.Config
	if user != "" {
		cfg = impersonate(cfg, user, "system:masters")
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	return c
}

func dryCreate(c client.Client, obj client.Object) func(context.Context) error {
	return func(ctx context.Context) error {
		return c.Create(ctx, obj.DeepCopyObject().(client.Object), client.DryRunAll)
	}
}

func dryPatch(c client.Client, obj client.Object, mergePatch string) func(context.Context) error {
	return func(ctx context.Context) error {
		return c.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(mergePatch)), client.DryRunAll)
	}
}

func dryPatchStatus(c client.Client, obj client.Object, mergePatch string) func(context.Context) error {
	return func(ctx context.Context) error {
		return c.Status().Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(mergePatch)), client.DryRunAll)
	}
}

func dryDelete(c client.Client, obj client.Object) func(context.Context) error {
	return func(ctx context.Context) error {
		return c.Delete(ctx, obj.DeepCopyObject().(client.Object), client.DryRunAll)
	}
}

// userNamespace is a namespace as the deployments manager creates it, with its marks.
func userNamespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelkeys.User: "bob"},
		Annotations: map[string]string{"scheduler.opsnorth.io/created-by": "opsnorth-scheduler-deployments"}}}
}

// fenceDeployment is a Deployment, the child of owner when it is not nil.
func fenceDeployment(namespace string, owner *ossav1.Agent) *appsv1.Deployment {
	labels := map[string]string{"app": "fence"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "fence"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(corev1.RestartPolicyAlways)}}}
	if owner != nil {
		d.OwnerReferences = []metav1.OwnerReference{{APIVersion: ossav1.SchemeGroupVersion.String(), Kind: "Agent", Name: owner.Name, UID: owner.UID}}
	}
	return d
}

func podSpec(restart corev1.RestartPolicy) corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
}

func fenceService(namespace string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "fence"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "fence"}, Ports: []corev1.ServicePort{{Port: 80}}}}
}

// fenceJob is an agent Job as the tasks manager labels them, suspended.
func fenceJob(namespace string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "fence",
		Labels: map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.Component: "agent"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: podSpec(corev1.RestartPolicyNever)}}}
}

func fenceLease(namespace string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "fence"}}
}

// fenceEvent is an events.k8s.io Event about regarding, as controller records it.
func fenceEvent(namespace, controller string, regarding corev1.ObjectReference) *eventsv1.Event {
	return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "fence"}, EventTime: metav1.NowMicro(),
		ReportingController: controller, ReportingInstance: controller + "-0", Action: "Reconcile", Reason: "Probe",
		Type: corev1.EventTypeNormal, Note: "fence probe", Regarding: regarding}
}

func fenceSecret(namespace, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{"k": []byte("v")}}
}

func fenceConfigMap(namespace string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "fence"}}
}
