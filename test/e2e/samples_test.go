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

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
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
	require.Len(t, samples, 12, "the samples README names twelve samples")
	t.Run("each", func(t *testing.T) { convergeEach(t, cs, samples, applied) })
	if !t.Failed() {
		requireStartedAfter(t, c, "default", "research-lead", "knowledge-base", "summarizer")
	}
}

// convergeEach waits, in parallel, for every sample to reach its documented end state.
func convergeEach(t *testing.T, cs versioned.Interface, samples []*unstructured.Unstructured, applied time.Time) {
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
				case "Agent":
					a, err := cs.OssaV1().Agents(ns).Get(t.Context(), name, metav1.GetOptions{})
					if err != nil {
						return false
					}
					state = "phase " + string(a.Status.Phase)
					if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady); c != nil {
						state += ", " + c.Reason + ": " + c.Message
					}
					return a.Status.Phase == ossav1.AgentReady && meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionReady)
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

// requireStartedAfter requires the Agent dependent's Deployment to have been
// created no earlier than each dependency became Ready: a dependent waits,
// creating nothing, until its required dependencies are Ready.
func requireStartedAfter(t *testing.T, c *localcluster.Cluster, ns, dependent string, dependencies ...string) {
	t.Helper()
	d, err := c.Clientset.AppsV1().Deployments(ns).Get(t.Context(), dependent, metav1.GetOptions{})
	require.NoError(t, err)
	for _, dep := range dependencies {
		a, err := scheduler(t, c).OssaV1().Agents(ns).Get(t.Context(), dep, metav1.GetOptions{})
		require.NoError(t, err)
		ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
		require.NotNil(t, ready, "Agent %s has a Ready condition", dep)
		assert.False(t, d.CreationTimestamp.Before(&ready.LastTransitionTime),
			"Deployment %s/%s created at %s, before its dependency %s was Ready at %s", ns, dependent,
			d.CreationTimestamp, dep, ready.LastTransitionTime)
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
