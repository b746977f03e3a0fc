package integration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
)

// validationNamespace holds the objects of the validation tests.
const validationNamespace = "it-validation"

type (
	agentTask          = schedulerv1alpha1.AgentTask
	workflow           = schedulerv1alpha1.Workflow
	userDeployment     = schedulerv1alpha1.UserDeployment
	deploymentTemplate = schedulerv1alpha1.DeploymentTemplate
)

// objectFactory builds a typed object in namespace ns named name.
type objectFactory func(ns, name string) runtime.Object

// build returns a factory of base(ns, name) changed by mutate.
func build[T runtime.Object](base func(ns, name string) T, mutate func(T)) objectFactory {
	return func(ns, name string) runtime.Object {
		obj := base(ns, name)
		if mutate != nil {
			mutate(obj)
		}
		return obj
	}
}

func newAgentTask(mutate func(*agentTask)) objectFactory { return build(validAgentTask, mutate) }
func newWorkflow(mutate func(*workflow)) objectFactory   { return build(validWorkflow, mutate) }
func newUserDeployment(mutate func(*userDeployment)) objectFactory {
	return build(validUserDeployment, mutate)
}
func newImageUserDeployment(mutate func(*userDeployment)) objectFactory {
	return build(validImageUserDeployment, mutate)
}
func newDeploymentTemplate(mutate func(*deploymentTemplate)) objectFactory {
	return build(func(_, name string) *deploymentTemplate { return validDeploymentTemplate(name) }, mutate)
}

// as adapts a typed mutation to any object.
func as[T runtime.Object](mutate func(T)) func(runtime.Object) {
	return func(obj runtime.Object) { mutate(obj.(T)) }
}

// invalidCase breaks exactly one rule of a valid base object.
type invalidCase struct {
	name string
	// obj builds the object to create.
	obj objectFactory
	// unset removes these dotted field paths from the request (required fields
	// cannot be left out through the typed structs).
	unset []string
	// update, when set, makes this an update case: obj is created unchanged,
	// then updated with this mutation, which must be refused.
	update func(runtime.Object)
	// before, in an update case, is an update that must pass first (what
	// only an update may set, such as a Workflow's approvals).
	before func(runtime.Object)
	// field is the path the apiserver reports the error at.
	field string
	// msg is part of the rule's message.
	msg string
}

var (
	tooLongName  = strings.Repeat("a", 64)
	dottedName   = "my.app"
	relativePath = "etc/app/settings.yaml"
)

func invalidCases() []invalidCase {
	return slices.Concat(invalidUserDeploymentCases(), invalidDeploymentTemplateCases(),
		invalidAgentTaskCases(), invalidAgentPodCases(), invalidSecretEnvCases(), invalidWorkflowCases(), invalidWorkflowControlCases())
}

// TestValidationBasesAreValid makes sure every invalid case starts from an
// object the apiserver accepts, so each refusal is due to its one mutation.
func TestValidationBasesAreValid(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)

	bases := map[string]objectFactory{
		"agenttask":            newAgentTask(nil),
		"workflow":             newWorkflow(nil),
		"userdeployment":       newUserDeployment(nil),
		"image userdeployment": newImageUserDeployment(nil),
		"deploymenttemplate":   newDeploymentTemplate(nil),
	}
	for name, base := range bases {
		t.Run(name, func(t *testing.T) {
			u := toUnstructured(t, base(validationNamespace, uniqueName("base")))
			_, err := resourceClient(t, dc, u).Create(t.Context(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			require.NoError(t, err)
		})
	}
}

// TestValidationRefusesInvalidObjects sends each invalid case and expects a
// 422 naming the field and the rule, with exactly one cause, and nothing stored.
func TestValidationRefusesInvalidObjects(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)

	cases := invalidCases()
	require.GreaterOrEqual(t, len(cases), 40)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			obj := tc.obj(validationNamespace, uniqueName(fmt.Sprintf("invalid-%03d", i)))
			u := toUnstructured(t, obj)
			for _, path := range tc.unset {
				fields := strings.Split(path, ".")
				_, found, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
				require.NoError(t, err)
				require.True(t, found, "%s is not set in the base object", path)
				unstructured.RemoveNestedField(u.Object, fields...)
			}
			rc := resourceClient(t, dc, u)

			if tc.update == nil {
				_, err := rc.Create(ctx, u, metav1.CreateOptions{})
				if err == nil {
					deleteOnCleanup(t, rc, u.GetName())
				}
				requireInvalid(t, err, tc.field, tc.msg)
				_, err = rc.Get(ctx, u.GetName(), metav1.GetOptions{})
				require.Truef(t, apierrors.IsNotFound(err), "a refused object must not be stored; get: %v", err)
				return
			}

			created, err := rc.Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err, "the base of an update case must be valid")
			deleteOnCleanup(t, rc, u.GetName())
			if tc.before != nil {
				prior := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
				fromUnstructured(t, created, prior)
				tc.before(prior)
				created, err = rc.Update(ctx, toUnstructured(t, prior), metav1.UpdateOptions{})
				require.NoError(t, err, "the first update of the case must be valid")
			}

			typed := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
			fromUnstructured(t, created, typed)
			tc.update(typed)
			changed := toUnstructured(t, typed)
			require.NotEqual(t, created.Object["spec"], changed.Object["spec"], "the update must change the spec")

			_, err = rc.Update(ctx, changed, metav1.UpdateOptions{})
			requireInvalid(t, err, tc.field, tc.msg)
			stored, err := rc.Get(ctx, u.GetName(), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, created.GetResourceVersion(), stored.GetResourceVersion(), "a refused update must not be stored")
			assert.Equal(t, created.Object["spec"], stored.Object["spec"])
		})
	}
}

// objectRoot is the field the apiserver reports rules on the whole object at.
const objectRoot = "<nil>"

// skippedRulesNote is the cause the apiserver adds when a schema error (a
// missing, too long or unsupported value) kept it from running the CEL rules.
const skippedRulesNote = "some validation rules were not checked because the object was invalid"

// requireInvalid checks err is a 422 with exactly one cause besides the
// skipped-rules note, reported at field and carrying msg.
func requireInvalid(t *testing.T, err error, field, msg string) {
	t.Helper()
	require.Errorf(t, err, "the apiserver accepted an object that breaks the rule %q at %s", msg, field)
	require.Truef(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), field+": ", "the message must name the field")
	require.Contains(t, err.Error(), msg)
	var causes []metav1.StatusCause
	for _, c := range statusCauses(err) {
		if !strings.Contains(c.Message, skippedRulesNote) {
			causes = append(causes, c)
		}
	}
	require.Lenf(t, causes, 1, "the case must break exactly one rule; got: %v", err)
	assert.Equal(t, field, causes[0].Field, "field of the cause")
	assert.Contains(t, causes[0].Message, msg)
}

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

// TestValidationAllowsMutableUpdates checks the immutability rules freeze only
// what they claim: a UserDeployment's spec apart from userId, an AgentTask's
// cancel and a template's spec change, with a new generation.
// mutableCase is an update of a valid object the apiserver must accept.
type mutableCase struct {
	name   string
	obj    objectFactory
	update func(runtime.Object)
	// before is an update that must pass first, as in invalidCase.
	before func(runtime.Object)
}

func TestValidationAllowsMutableUpdates(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)

	tests := append([]mutableCase{
		{
			name: "userdeployment stopped and scaled by hand",
			obj:  newUserDeployment(nil),
			update: as(func(u *userDeployment) {
				u.Spec.DesiredState, u.Spec.Autoscaling, u.Spec.Replicas = schedulerv1alpha1.DesiredStopped, nil, ptr.To[int32](0)
			}),
		},
		{
			name:   "userdeployment moved to another template",
			obj:    newUserDeployment(nil),
			update: as(func(u *userDeployment) { u.Spec.Template = "static-site" }),
		},
		{
			name:   "agenttask cancelled",
			obj:    newAgentTask(nil),
			update: as(func(a *agentTask) { a.Spec.Cancel = true }),
		},
		{
			name:   "template with a new image",
			obj:    newDeploymentTemplate(nil),
			update: as(func(d *deploymentTemplate) { d.Spec.Services[0].Image = "ghcr.io/opsnorth/web-app:1.5.0" }),
		},
	}, workflowControlUpdates()...)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			obj := tc.obj(validationNamespace, uniqueName(fmt.Sprintf("mutable-%02d", i)))
			u := toUnstructured(t, obj)
			rc := resourceClient(t, dc, u)
			created, err := rc.Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err)
			deleteOnCleanup(t, rc, u.GetName())
			if tc.before != nil {
				prior := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
				fromUnstructured(t, created, prior)
				tc.before(prior)
				created, err = rc.Update(ctx, toUnstructured(t, prior), metav1.UpdateOptions{})
				require.NoError(t, err, "the first update of the case must be valid")
			}

			typed := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
			fromUnstructured(t, created, typed)
			tc.update(typed)
			changed := toUnstructured(t, typed)
			updated, err := rc.Update(ctx, changed, metav1.UpdateOptions{})
			require.NoError(t, err)
			assert.Equal(t, changed.Object["spec"], updated.Object["spec"])
			assert.Equal(t, created.GetGeneration()+1, updated.GetGeneration())
		})
	}
}
