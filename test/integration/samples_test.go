package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
)

// samplesFieldManager owns the fields of the server-side-applied samples.
const samplesFieldManager = "samples-test"

// sampleNamespaces is where each kind's samples live (see manifests/samples/README.md).
var sampleNamespaces = map[string]string{
	kindAgentTask:          "agent-tasks",
	kindWorkflow:           "agent-tasks",
	kindUserDeployment:     "agent-tasks",
	kindDeploymentTemplate: "",
	kindAgent:              "default",
}

// fieldDefault is a field the sample leaves out and the apiserver fills in.
type fieldDefault struct {
	// path to the field: map keys (string) and list indexes (int).
	path  []any
	value any
}

func at(path ...any) []any { return path }

// sampleCase is one sample file and the defaults the apiserver adds to it.
type sampleCase struct {
	file     string
	kind     string
	defaults []fieldDefault
}

var sampleCases = []sampleCase{
	{
		file: "deploymenttemplate-web-app.yaml", kind: kindDeploymentTemplate,
		defaults: []fieldDefault{
			{at("spec", "services", 0, "serviceType"), "ClusterIP"},
			{at("spec", "services", 0, "ports", 0, "protocol"), "TCP"},
			{at("spec", "services", 0, "ports", 1, "protocol"), "TCP"},
			{at("spec", "services", 0, "metrics", "path"), "/metrics"},
			{at("spec", "services", 1, "serviceType"), "ClusterIP"},
			{at("spec", "services", 1, "replicas"), int64(1)},
		},
	},
	{
		file: "deploymenttemplate-static-site.yaml", kind: kindDeploymentTemplate,
		defaults: []fieldDefault{
			{at("spec", "services", 0, "serviceType"), "ClusterIP"},
			{at("spec", "services", 0, "ports", 0, "protocol"), "TCP"},
			{at("spec", "services", 0, "replicas"), int64(1)},
		},
	},
	{
		file: "userdeployment-shop.yaml", kind: kindUserDeployment,
		defaults: []fieldDefault{
			{at("spec", "desiredState"), "running"},
			{at("spec", "autoscaling", "targetCPUUtilizationPercentage"), int64(80)},
		},
	},
	{
		file: "userdeployment-hello.yaml", kind: kindUserDeployment,
		defaults: []fieldDefault{
			{at("spec", "desiredState"), "running"},
			{at("spec", "visibility"), "public"},
			{at("spec", "tier"), "free"},
		},
	},
	{
		file: "userdeployment-shop-admin.yaml", kind: kindUserDeployment,
		defaults: []fieldDefault{
			{at("spec", "desiredState"), "running"},
			{at("spec", "tier"), "free"},
		},
	},
	{
		file: "agent-k8s-knowledge-base.yaml", kind: kindAgent,
		defaults: []fieldDefault{
			{at("spec", "replicas"), int64(1)},
			{at("spec", "agent", "runtime", "health_check", "failure_threshold"), int64(3)},
			{at("spec", "agent", "runtime", "health_check", "initial_delay_seconds"), int64(30)},
			{at("spec", "agent", "runtime", "health_check", "period_seconds"), int64(10)},
			{at("spec", "agent", "runtime", "health_check", "timeout_seconds"), int64(5)},
		},
	},
	{
		file: "agent-docker-summarizer.yaml", kind: kindAgent,
		defaults: []fieldDefault{
			{at("spec", "replicas"), int64(1)},
			{at("spec", "agent", "capabilities", 0, "timeout_seconds"), int64(300)},
			{at("spec", "agent", "runtime", "health_check", "failure_threshold"), int64(3)},
			{at("spec", "agent", "runtime", "health_check", "initial_delay_seconds"), int64(30)},
			{at("spec", "agent", "runtime", "health_check", "period_seconds"), int64(10)},
			{at("spec", "agent", "runtime", "health_check", "timeout_seconds"), int64(5)},
		},
	},
	{
		file: "agent-docker-research-lead.yaml", kind: kindAgent,
		defaults: []fieldDefault{
			{at("spec", "agent", "policies", "audit"), false},
			{at("spec", "agent", "policies", "encryption"), true},
			{at("spec", "agent", "runtime", "health_check", "failure_threshold"), int64(3)},
			{at("spec", "agent", "runtime", "health_check", "initial_delay_seconds"), int64(30)},
			{at("spec", "agent", "runtime", "health_check", "period_seconds"), int64(10)},
			{at("spec", "agent", "runtime", "health_check", "timeout_seconds"), int64(5)},
		},
	},
	{file: "agenttask-minimal.yaml", kind: kindAgentTask},
	{file: "agenttask-full.yaml", kind: kindAgentTask},
	{file: "workflow-research-report.yaml", kind: kindWorkflow},
	{
		file: "workflow-release-pipeline.yaml", kind: kindWorkflow,
		defaults: []fieldDefault{
			{at("spec", "steps", 1, "retries", "backoffSeconds"), int64(5)},
			{at("spec", "steps", 1, "retries", "maxBackoffSeconds"), int64(300)},
		},
	},
}

func samplesDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "manifests", "samples")
}

// TestSamplesKustomizationListsEverySample keeps kustomization.yaml, the
// sample files and this test's table in step.
func TestSamplesKustomizationListsEverySample(t *testing.T) {
	dir := samplesDir(t)
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	var kustomization struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	require.NoError(t, yaml.UnmarshalStrict(data, &kustomization))
	assert.Equal(t, "kustomize.config.k8s.io/v1beta1", kustomization.APIVersion)
	assert.Equal(t, "Kustomization", kustomization.Kind)

	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	var samples []string
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" {
			samples = append(samples, base)
		}
	}
	var tested []string
	for _, sc := range sampleCases {
		tested = append(tested, sc.file)
	}
	assert.ElementsMatch(t, samples, kustomization.Resources, "kustomization.yaml must list every sample")
	assert.ElementsMatch(t, samples, tested, "samples_test.go must test every sample")
}

// TestSamplesAreAccepted creates every sample as a client would and reads it
// back: the spec is what was sent plus exactly the listed defaults.
func TestSamplesAreAccepted(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, sampleNamespaces[kindAgentTask])

	for _, sc := range sampleCases {
		t.Run(sc.file, func(t *testing.T) {
			sample := loadSample(t, sc)
			want := withDefaults(t, sample, sc.defaults)

			u := sample.DeepCopy()
			u.SetName(uniqueName(sample.GetName()))
			rc := resourceClient(t, dc, u)
			created, err := rc.Create(t.Context(), u, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
			require.NoError(t, err)
			deleteOnCleanup(t, rc, u.GetName())

			assert.Equal(t, int64(1), created.GetGeneration())
			assert.Equal(t, sample.GetLabels(), created.GetLabels())
			assert.Equal(t, want.Object["spec"], created.Object["spec"], "created spec = sample + defaults")
			stored, err := rc.Get(t.Context(), u.GetName(), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, want.Object["spec"], stored.Object["spec"], "stored spec = sample + defaults")
		})
	}
}

// TestSamplesRoundTripServerSideApply applies every sample with server-side
// apply: the result is the sample plus its defaults, the field manager owns
// the spec, and applying again changes nothing.
func TestSamplesRoundTripServerSideApply(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, sampleNamespaces[kindAgentTask])

	for _, sc := range sampleCases {
		t.Run(sc.file, func(t *testing.T) {
			sample := loadSample(t, sc)
			want := withDefaults(t, sample, sc.defaults)

			u := sample.DeepCopy()
			u.SetName(uniqueName(sample.GetName()))
			rc := resourceClient(t, dc, u)
			applied := applySample(t, rc, u)
			deleteOnCleanup(t, rc, u.GetName())

			assert.Equal(t, want.Object["spec"], applied.Object["spec"], "applied spec = sample + defaults")
			require.Len(t, applied.GetManagedFields(), 1)
			mf := applied.GetManagedFields()[0]
			assert.Equal(t, samplesFieldManager, mf.Manager)
			assert.Equal(t, metav1.ManagedFieldsOperationApply, mf.Operation)
			require.NotNil(t, mf.FieldsV1)
			assert.Contains(t, mf.FieldsV1.GetRawString(), `"f:spec":{`, "the applier owns the spec")

			again := applySample(t, rc, u)
			assert.Equal(t, applied.GetResourceVersion(), again.GetResourceVersion(), "re-applying the same sample must be a no-op")
			assert.Equal(t, int64(1), again.GetGeneration())
		})
	}
}

func applySample(t *testing.T, rc dynamic.ResourceInterface, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	applied, err := rc.Apply(t.Context(), u.GetName(), u, metav1.ApplyOptions{FieldManager: samplesFieldManager})
	require.NoError(t, err)
	return applied
}

// loadSample reads one sample file, checks its form (a leading comment, one
// object, the documented namespace, only fields the Go types know) and
// returns it.
func loadSample(t *testing.T, sc sampleCase) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(samplesDir(t), sc.file))
	require.NoError(t, err)

	first, _, _ := bytes.Cut(data, []byte("\n"))
	assert.Regexp(t, `^# \S.{20,}$`, string(first), "a sample opens with a comment saying what it shows")
	assert.NotContains(t, string(data), "\n---", "one object per file")

	typed := map[string]runtime.Object{
		kindAgentTask:          &schedulerv1alpha1.AgentTask{},
		kindWorkflow:           &schedulerv1alpha1.Workflow{},
		kindUserDeployment:     &schedulerv1alpha1.UserDeployment{},
		kindDeploymentTemplate: &schedulerv1alpha1.DeploymentTemplate{},
		kindAgent:              &ossav1.Agent{},
	}[sc.kind]
	require.NoError(t, yaml.UnmarshalStrict(data, typed), "the sample must decode strictly into the Go type")

	jsonData, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(jsonData))
	require.Equal(t, schedulerResources[sc.kind].gvr.GroupVersion().WithKind(sc.kind), u.GroupVersionKind())
	require.Equal(t, sampleNamespaces[sc.kind], u.GetNamespace(), "namespace convention of manifests/samples/README.md")
	require.NotEmpty(t, u.GetName())
	require.Truef(t, strings.HasPrefix(sc.file, strings.ToLower(sc.kind)+"-"), "file %s is named after its kind", sc.file)
	return u
}

// withDefaults returns a copy of sample with each default set, after
// checking the sample really leaves the field out.
func withDefaults(t *testing.T, sample *unstructured.Unstructured, defaults []fieldDefault) *unstructured.Unstructured {
	t.Helper()
	want := sample.DeepCopy()
	for _, d := range defaults {
		_, found := nestedValue(t, want.Object, d.path)
		require.Falsef(t, found, "the sample sets %v, so its default is not exercised", d.path)
		setNestedValue(t, want.Object, d.path, d.value)
	}
	return want
}

// nestedValue reads the value at path; parents must exist.
func nestedValue(t *testing.T, obj map[string]any, path []any) (any, bool) {
	t.Helper()
	var cur any = obj
	for i, p := range path {
		switch key := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			require.Truef(t, ok, "%v is not an object", path[:i])
			v, found := m[key]
			if !found {
				return nil, false
			}
			cur = v
		case int:
			l, ok := cur.([]any)
			require.Truef(t, ok, "%v is not a list", path[:i])
			require.Lessf(t, key, len(l), "%v has no item %d", path[:i], key)
			cur = l[key]
		default:
			require.Failf(t, "bad path", "%v: element %v is neither a key nor an index", path, p)
		}
	}
	return cur, true
}

// setNestedValue sets the value at path; the parent must exist.
func setNestedValue(t *testing.T, obj map[string]any, path []any, value any) {
	t.Helper()
	parentPath, last := path[:len(path)-1], path[len(path)-1]
	parent, found := nestedValue(t, obj, parentPath)
	require.Truef(t, found, "parent %v of a default is missing", parentPath)
	switch key := last.(type) {
	case string:
		m, ok := parent.(map[string]any)
		require.Truef(t, ok, "%v is not an object", parentPath)
		m[key] = value
	default:
		require.Fail(t, "bad path", fmt.Sprintf("%v must end in a field name", path))
	}
}

// TestSampleNamesAreUnique makes sure no two samples of a kind share a name.
func TestSampleNamesAreUnique(t *testing.T) {
	seen := map[string][]string{}
	for _, sc := range sampleCases {
		u := loadSample(t, sc)
		key := sc.kind + "/" + u.GetNamespace() + "/" + u.GetName()
		seen[key] = append(seen[key], sc.file)
	}
	for key, files := range seen {
		assert.Lenf(t, files, 1, "%s is defined by %v", key, files)
	}
}

// sampleReference matches ${steps.N.output.KEY}, ${steps.NAME.output.KEY} and
// ${inputs.KEY}; a "$${" escape is skipped by the caller.
var sampleReference = regexp.MustCompile(`\$?\$\{(?:steps\.([a-z0-9-]+)\.output\.([A-Za-z_][A-Za-z0-9_]*)|inputs\.([A-Za-z_][A-Za-z0-9_]*))\}`)

// TestWorkflowSamplesReferenceKnownValues checks every reference in the
// workflow samples names a workflow input or a step that finishes before the
// step reading it, so the samples would run.
func TestWorkflowSamplesReferenceKnownValues(t *testing.T) {
	for _, sc := range sampleCases {
		if sc.kind != kindWorkflow {
			continue
		}
		t.Run(sc.file, func(t *testing.T) {
			var wf schedulerv1alpha1.Workflow
			fromUnstructured(t, loadSample(t, sc), &wf)
			index := map[string]int{}
			for i, s := range wf.Spec.Steps {
				index[s.Name] = i
			}
			refs := 0
			for i, step := range wf.Spec.Steps {
				for key, value := range step.Input {
					for _, m := range sampleReference.FindAllStringSubmatch(value, -1) {
						if strings.HasPrefix(m[0], "$$") {
							continue
						}
						refs++
						if m[3] != "" {
							assert.Containsf(t, wf.Spec.Input, m[3], "step %s input %s: %s names no workflow input", step.Name, key, m[0])
							continue
						}
						from, err := strconv.Atoi(m[1])
						if err != nil {
							var ok bool
							from, ok = index[m[1]]
							require.Truef(t, ok, "step %s input %s: %s names no step", step.Name, key, m[0])
						}
						assert.Truef(t, precedes(wf.Spec.Steps, from, i), "step %s input %s: %s does not finish before the step", step.Name, key, m[0])
					}
				}
			}
			assert.Positive(t, refs, "a workflow sample shows references")
		})
	}
}

// precedes reports whether step from always finishes before step to starts:
// by list order when no step has dependsOn, else through dependsOn.
func precedes(steps []schedulerv1alpha1.WorkflowStep, from, to int) bool {
	dag := slices.ContainsFunc(steps, func(s schedulerv1alpha1.WorkflowStep) bool { return len(s.DependsOn) > 0 })
	if !dag {
		return from < to
	}
	index := map[string]int{}
	for i, s := range steps {
		index[s.Name] = i
	}
	seen := map[int]bool{}
	var reach func(int) bool
	reach = func(i int) bool {
		for _, d := range steps[i].DependsOn {
			j := index[d]
			if j == from {
				return true
			}
			if !seen[j] {
				seen[j] = true
				if reach(j) {
					return true
				}
			}
		}
		return false
	}
	return reach(to)
}
