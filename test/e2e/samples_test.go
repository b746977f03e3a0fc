//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// TestSamplesConverge applies the samples as `make run` does (prerequisites
// first) and requires every one to reach the end state
// manifests/samples/README.md documents for its kind. The list comes from
// the files, so a new sample cannot be left out.
func TestSamplesConverge(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	dir := filepath.Join(root, "manifests", "samples")
	files, err := localcluster.ManifestFiles(filepath.Join(dir, "prerequisites", "*.yaml"), filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	applied := time.Now()
	_, err = c.Apply(t.Context(), files...)
	require.NoError(t, err)

	samples := sampleObjects(t, filepath.Join(dir, "*.yaml"))
	require.Len(t, samples, 9, "the samples README names nine samples")
	for _, s := range samples {
		t.Run(s.GetKind()+" "+s.GetName(), func(t *testing.T) {
			t.Parallel()
			ns, name := s.GetNamespace(), s.GetName()
			var state string
			converged := func() bool {
				switch s.GetKind() {
				case "AgentTask":
					at, err := cs.SchedulerV1alpha1().AgentTasks(ns).Get(t.Context(), name, metav1.GetOptions{})
					if err != nil {
						return false
					}
					state = fmt.Sprintf("phase %s, reason %s: %s", at.Status.Phase, at.Status.Reason, at.Status.Message)
					return at.Status.Phase == v1alpha1.TaskSucceeded
				case "Workflow":
					wf, err := cs.SchedulerV1alpha1().Workflows(ns).Get(t.Context(), name, metav1.GetOptions{})
					if err != nil {
						return false
					}
					state = fmt.Sprintf("phase %s: %s", wf.Status.Phase, wf.Status.Message)
					return wf.Status.Phase == v1alpha1.WorkflowSucceeded
				case "UserDeployment":
					ud, err := cs.SchedulerV1alpha1().UserDeployments(ns).Get(t.Context(), name, metav1.GetOptions{})
					if err != nil {
						return false
					}
					state = "phase " + string(ud.Status.Phase)
					if c := meta.FindStatusCondition(ud.Status.Conditions, v1alpha1.ConditionReady); c != nil {
						state += ", " + c.Reason + ": " + c.Message
					}
					return ud.Status.Phase == v1alpha1.PhaseReady && meta.IsStatusConditionTrue(ud.Status.Conditions, v1alpha1.ConditionReady)
				case "DeploymentTemplate":
					_, err := cs.SchedulerV1alpha1().DeploymentTemplates().Get(t.Context(), name, metav1.GetOptions{})
					state = fmt.Sprint(err)
					return err == nil
				}
				t.Fatalf("no documented end state for kind %s", s.GetKind())
				return false
			}
			if !assert.Eventually(t, converged, 2*timeout, tick) {
				t.Fatalf("%s %s/%s never converged; last seen %s", s.GetKind(), ns, name, state)
			}
			t.Logf("%s %s/%s converged %s after the samples were applied: %s", s.GetKind(), ns, name,
				time.Since(applied).Round(100*time.Millisecond), state)
		})
	}
}

// sampleObjects reads the objects of the sample files (not the
// kustomization).
func sampleObjects(t *testing.T, pattern string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(pattern)
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(doc), &obj.Object), f)
			if obj.Object != nil {
				out = append(out, obj)
			}
		}
	}
	return out
}
