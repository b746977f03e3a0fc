package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
)

// validCase is a valid object at the edge of some rule.
type validCase struct {
	name string
	obj  objectFactory
	// tweak edits the request where the typed structs cannot say it (e.g.
	// quantities as JSON numbers).
	tweak func(t *testing.T, u *unstructured.Unstructured)
}

// setServiceField sets a field of spec.services[i] of a DeploymentTemplate request.
func setServiceField(t *testing.T, u *unstructured.Unstructured, i int, value any, fields ...string) {
	t.Helper()
	services, found, err := unstructured.NestedSlice(u.Object, "spec", "services")
	require.NoError(t, err)
	require.True(t, found)
	require.NoError(t, unstructured.SetNestedField(services[i].(map[string]any), value, fields...))
	require.NoError(t, unstructured.SetNestedSlice(u.Object, services, "spec", "services"))
}

func validCases() []validCase {
	name63 := strings.Repeat("a", 63)
	return []validCase{
		{name: "agenttask name of 63 characters", obj: newAgentTask(func(a *agentTask) { a.Name = name63 })},
		{
			name: "agenttask input keys that only look reserved",
			obj: newAgentTask(func(a *agentTask) {
				for _, k := range allowedInputKeys {
					a.Spec.Input[k] = "x"
				}
			}),
		},
		{
			name: "agenttask input of exactly the total limit",
			obj: newAgentTask(func(a *agentTask) {
				a.Spec.Input = bulkyInput(8, 32768-2) // keys K0..K7 are 2 bytes: 8 x 32768 = 262144
			}),
		},
		{
			name: "workflow step input of exactly the total limit",
			obj:  newWorkflow(func(w *workflow) { w.Spec.Steps[0].Input = bulkyInput(8, 32768-2) }),
		},
		{name: "userdeployment name of 63 characters", obj: newUserDeployment(func(u *userDeployment) { u.Name = name63 })},
		{name: "userdeployment userId of 40 characters", obj: newUserDeployment(func(u *userDeployment) { u.Spec.UserID = strings.Repeat("u", 40) })},
		{name: "userdeployment containerPort 1", obj: newImageUserDeployment(func(u *userDeployment) { u.Spec.ContainerPort = ptr.To[int32](1) })},
		{name: "userdeployment containerPort 65535", obj: newImageUserDeployment(func(u *userDeployment) { u.Spec.ContainerPort = ptr.To[int32](65535) })},
		{name: "userdeployment replicas 0", obj: newImageUserDeployment(func(u *userDeployment) { u.Spec.Replicas = ptr.To[int32](0) })},
		{name: "userdeployment replicas 100", obj: newImageUserDeployment(func(u *userDeployment) { u.Spec.Replicas = ptr.To[int32](100) })},
		{
			name: "userdeployment image with autoscaling min equal max",
			obj: newImageUserDeployment(func(u *userDeployment) {
				u.Spec.Replicas, u.Spec.Autoscaling = nil, &schedulerv1alpha1.Autoscaling{MinReplicas: 3, MaxReplicas: 3}
			}),
		},
		{name: "userdeployment stopped", obj: newUserDeployment(func(u *userDeployment) { u.Spec.DesiredState = schedulerv1alpha1.DesiredStopped })},
		{name: "userdeployment deleted", obj: newUserDeployment(func(u *userDeployment) { u.Spec.DesiredState = schedulerv1alpha1.DesiredDeleted })},
		{
			name: "userdeployment env keys at the edge",
			obj: newUserDeployment(func(u *userDeployment) {
				u.Spec.ConfigData = schedulerv1alpha1.EnvMap{"_PRIVATE": "1", "a1": "2", strings.Repeat("K", 128): "3"}
			}),
		},
		{
			name: "userdeployment serviceConfigData key of 40 characters",
			obj: newUserDeployment(func(u *userDeployment) {
				u.Spec.ServiceConfigData[strings.Repeat("s", 40)] = schedulerv1alpha1.EnvMap{"A": "b"}
			}),
		},
		{
			name: "userdeployment config file paths with dots inside names",
			obj: newUserDeployment(func(u *userDeployment) {
				u.Spec.ConfigFiles = []schedulerv1alpha1.ConfigFile{{Path: "/a", Content: ""}, {Path: "/etc/app/..data", Content: "x"}, {Path: "/etc/app..yaml", Content: "y"}}
			}),
		},
		{name: "agenttask timeoutSeconds of a week", obj: newAgentTask(func(a *agentTask) { a.Spec.TimeoutSeconds = ptr.To[int64](604800) })},
		{name: "agenttask ttl 0", obj: newAgentTask(func(a *agentTask) { a.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) })},
		{name: "agenttask ttl of 30 days", obj: newAgentTask(func(a *agentTask) { a.Spec.TTLSecondsAfterFinished = ptr.To[int32](2592000) })},
		{name: "agenttask taskId with dots and underscores", obj: newAgentTask(func(a *agentTask) { a.Spec.TaskID = "Run_2024.06.01-A" })},
		{name: "agenttask webhook to localhost with a port", obj: newAgentTask(func(a *agentTask) { a.Spec.WebhookURL = "http://localhost:8080/hook" })},
		{name: "agenttask webhook to an IPv6 address", obj: newAgentTask(func(a *agentTask) { a.Spec.WebhookURL = "https://[::1]:8443/hook?x=1" })},
		{
			name: "agenttask requests equal to limits in other units",
			obj: newAgentTask(func(a *agentTask) {
				a.Spec.Resources.Requests.CPU, a.Spec.Resources.Limits.CPU = quantity("1000m"), quantity("1")
				a.Spec.Resources.Requests.Memory, a.Spec.Resources.Limits.Memory = quantity("1024Mi"), quantity("1Gi")
			}),
		},
		{
			name: "agenttask requests without limits",
			obj: newAgentTask(func(a *agentTask) {
				a.Spec.Resources.Limits = nil
				a.Spec.Resources.Requests.EphemeralStorage = quantity("2Gi")
			}),
		},
		{
			name: "agenttask quantities as JSON numbers",
			obj:  newAgentTask(nil),
			tweak: func(t *testing.T, u *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedField(u.Object, int64(1), "spec", "resources", "requests", "cpu"))
				require.NoError(t, unstructured.SetNestedField(u.Object, int64(2), "spec", "resources", "limits", "cpu"))
			},
		},
		{
			name: "workflow retries at the edge",
			obj: newWorkflow(func(w *workflow) {
				w.Spec.Steps[0].Retries = &schedulerv1alpha1.RetryPolicy{Limit: 0}
				w.Spec.Steps[1].Retries = &schedulerv1alpha1.RetryPolicy{Limit: 10, BackoffSeconds: ptr.To[int32](60), MaxBackoffSeconds: ptr.To[int32](60)}
			}),
		},
		{
			name: "workflow step input with references and an escaped literal",
			obj: newWorkflow(func(w *workflow) {
				w.Spec.Steps[2].Input["TEMPLATE"] = "$${not.a.reference} ${steps.0.output.path} ${inputs.REPO_URL}"
			}),
		},
		{name: "workflow of 50 steps, each depending on up to 20 earlier ones", obj: newWorkflow(func(w *workflow) { w.Spec.Steps = denseSteps(50, 20) })},
		{name: "template of 20 services with 16 ports each", obj: newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services = manyServices(20, 16) })},
		{
			name: "template storage size as a JSON number",
			obj:  newDeploymentTemplate(nil),
			tweak: func(t *testing.T, u *unstructured.Unstructured) {
				setServiceField(t, u, 1, int64(1073741824), "storage", "size")
			},
		},
		{
			name: "template probes with grpc, exec and tcpSocket handlers",
			obj: newDeploymentTemplate(func(d *deploymentTemplate) {
				d.Spec.Services[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9090}}}
				d.Spec.Services[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/healthcheck"}}}}
				d.Spec.Services[1].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(7000)}}}
			}),
		},
		{name: "template metrics interval 1m30s", obj: newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Metrics.Interval = "1m30s" })},
		{name: "template replicas 0", obj: newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Replicas = ptr.To[int32](0) })},
	}
}

// denseSteps returns n steps where each depends on up to deps earlier steps:
// the most work the dependsOn rules can be asked to do.
func denseSteps(n, deps int) []schedulerv1alpha1.WorkflowStep {
	steps := make([]schedulerv1alpha1.WorkflowStep, n)
	for i := range steps {
		steps[i] = schedulerv1alpha1.WorkflowStep{Name: fmt.Sprintf("step-%02d", i), Image: "ghcr.io/opsnorth/agents/noop:1.0.0"}
		for j := max(0, i-deps); j < i; j++ {
			steps[i].DependsOn = append(steps[i].DependsOn, fmt.Sprintf("step-%02d", j))
		}
	}
	return steps
}

// manyServices returns n services with ports ports each, exposing and
// scraping their last port: the most work the port rules can be asked to do.
func manyServices(n, ports int) []schedulerv1alpha1.TemplateService {
	services := make([]schedulerv1alpha1.TemplateService, n)
	for i := range services {
		s := schedulerv1alpha1.TemplateService{Name: fmt.Sprintf("svc-%02d", i), Image: "ghcr.io/opsnorth/svc:1.0.0"}
		for p := range ports {
			s.Ports = append(s.Ports, schedulerv1alpha1.ServicePort{Name: fmt.Sprintf("port-%02d", p), Port: int32(8000 + p)})
		}
		last := s.Ports[ports-1].Name
		s.Expose, s.Metrics = last, &schedulerv1alpha1.MetricsEndpoint{Port: last}
		services[i] = s
	}
	return services
}

// TestValidationAcceptsBoundaryValues guards against rules that refuse valid
// input: each object sits at the edge of a rule and must be accepted.
func TestValidationAcceptsBoundaryValues(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)

	for i, tc := range append(validCases(), validSecretEnvCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj(validationNamespace, uniqueName(fmt.Sprintf("valid-%03d", i)))
			u := toUnstructured(t, obj)
			if tc.tweak != nil {
				tc.tweak(t, u)
			}
			_, err := resourceClient(t, dc, u).Create(t.Context(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			require.NoError(t, err)
		})
	}
}
