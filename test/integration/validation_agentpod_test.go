package integration

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// invalidAgentPodCases break one rule each of an AgentTask's placement,
// extended resources and control fields.
func invalidAgentPodCases() []invalidCase {
	gpus := func(n string) map[string]resource.Quantity {
		return map[string]resource.Quantity{"nvidia.com/gpu": resource.MustParse(n)}
	}
	return []invalidCase{
		{
			name:  "agenttask pod label in the kubernetes.io prefix",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.PodMetadata.Labels["app.kubernetes.io/name"] = "x" }),
			field: "spec.podMetadata.labels", msg: "keys in the kubernetes.io, k8s.io and opsnorth.io prefixes are reserved",
		},
		{
			name:  "agenttask pod annotation in the opsnorth.io prefix",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.PodMetadata.Annotations["scheduler.opsnorth.io/agent-task"] = "other" }),
			field: "spec.podMetadata.annotations", msg: "keys in the kubernetes.io, k8s.io and opsnorth.io prefixes are reserved",
		},
		{
			name:  "agenttask runtimeClassName not a name",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.RuntimeClassName = "GVisor!" }),
			field: "spec.runtimeClassName", msg: "should match",
		},
		{
			name:  "agenttask priorityClassName not a name",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.PriorityClassName = "high priority" }),
			field: "spec.priorityClassName", msg: "should match",
		},
		{
			name: "agenttask extended resource without a domain",
			obj: newAgentTask(func(a *agentTask) {
				a.Spec.Resources.Limits.Extended = map[string]resource.Quantity{"gpu": resource.MustParse("1")}
			}),
			field: "spec.resources.limits.extended", msg: "extended resource names are domain/name",
		},
		{
			name: "agenttask extended resource in kubernetes.io",
			obj: newAgentTask(func(a *agentTask) {
				a.Spec.Resources.Limits.Extended = map[string]resource.Quantity{"kubernetes.io/gpu": resource.MustParse("1")}
			}),
			field: "spec.resources.limits.extended", msg: "outside kubernetes.io",
		},
		{
			name:  "agenttask extended resource fractional",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Resources.Limits.Extended = gpus("500m") }),
			field: "spec.resources.limits.extended", msg: "extended resources must be whole numbers greater than zero",
		},
		{
			name: "agenttask extended resource overcommitted",
			obj: newAgentTask(func(a *agentTask) {
				a.Spec.Resources.Requests.Extended, a.Spec.Resources.Limits.Extended = gpus("1"), gpus("2")
			}),
			field: "spec.resources", msg: "extended resources cannot be overcommitted",
		},
		{
			name:  "agenttask toleration with a bad operator",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Tolerations[0].Operator = "Near" }),
			field: "spec.tolerations", msg: "operator must be Exists or Equal",
		},
		{
			name:   "agenttask cancel unset",
			obj:    newAgentTask(func(a *agentTask) { a.Spec.Cancel = true }),
			update: as(func(a *agentTask) { a.Spec.Cancel = false }),
			field:  "spec.cancel", msg: "spec.cancel cannot be unset",
		},
		{
			name:   "agenttask placement changed",
			obj:    newAgentTask(nil),
			update: as(func(a *agentTask) { a.Spec.RuntimeClassName = "runc" }),
			field:  "spec", msg: "spec is immutable apart from cancel",
		},
		{
			name: "agenttask tolerations changed",
			obj:  newAgentTask(nil),
			update: as(func(a *agentTask) {
				a.Spec.Tolerations = append(a.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
			}),
			field: "spec", msg: "spec is immutable apart from cancel",
		},
		{
			name:   "agenttask affinity removed",
			obj:    newAgentTask(nil),
			update: as(func(a *agentTask) { a.Spec.Affinity = nil }),
			field:  "spec", msg: "spec is immutable apart from cancel",
		},
		{
			name:   "agenttask optional field added",
			obj:    newAgentTask(func(a *agentTask) { a.Spec.StartTimeoutSeconds = nil }),
			update: as(func(a *agentTask) { a.Spec.StartTimeoutSeconds = ptr.To[int64](60) }),
			field:  "spec", msg: "spec is immutable apart from cancel",
		},
	}
}

// TestSpecImmutability: the AgentTask's immutability rule names every spec
// field but cancel, so a field added later cannot become mutable unnoticed.
func TestSpecImmutability(t *testing.T) {
	rule := immutabilityRule(t, "scheduler.opsnorth.io_agenttasks.yaml")
	for _, field := range jsonFields(reflect.TypeFor[schedulerv1alpha1.AgentTaskSpec]()) {
		if field == "cancel" {
			assert.NotContains(t, rule, "self.cancel ==")
			continue
		}
		assert.Contains(t, rule, "self."+field+" == oldSelf."+field, "spec.%s is missing from the immutability rule", field)
	}
}

// immutabilityRule is the "spec is immutable" rule of the CRD in file.
func immutabilityRule(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "manifests", "crd", file))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.Unmarshal(data, crd))
	var rule string
	for _, v := range crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations {
		if strings.HasPrefix(v.Message, "spec is immutable") {
			rule = v.Rule
		}
	}
	require.NotEmpty(t, rule)
	return rule
}

// jsonFields are the JSON names of t's fields, inlined structs flattened.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && opts == "inline" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		out = append(out, name)
	}
	return out
}
