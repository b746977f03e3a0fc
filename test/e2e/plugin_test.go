//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// TestHumanInTheLoopThroughThePlugin drives a draft → approve → publish
// workflow with the kubectl-opsnorth binary alone, as a person does: the
// workflow waits at the approval step, its author may not approve it, the
// plugin signs the admin's approval with the caller's username (the
// approvals admission policy checks it), and the publishing agent receives
// the approver and comment.
func TestHumanInTheLoopThroughThePlugin(t *testing.T) {
	c := requireCluster(t)
	plugin := pluginRunner(t, c)
	name := fmt.Sprintf("e2e-%d-hitl", time.Now().Unix()%100000)
	manifest := fmt.Sprintf(`apiVersion: scheduler.opsnorth.io/v1alpha1
kind: Workflow
metadata: {name: %s, namespace: %s}
spec:
  userId: e2e
  steps:
    - name: draft
      image: agent:e2e
      input: {KWOK_TERMINATION_MESSAGE: '{"title":"Q3 report"}'}
    - name: review
      approval: {message: 'publish ${steps.draft.output.title}?', timeoutSeconds: 600}
    - name: publish
      image: agent:e2e
      input: {KWOK_TERMINATION_MESSAGE: '{"by":"${steps.review.output.approver}","note":"${steps.review.output.comment}"}'}
`, name, taskNamespace)
	path := filepath.Join(t.TempDir(), "wf.yaml")
	require.NoError(t, os.WriteFile(path, []byte(manifest), 0o600))
	// An author writes the workflow; the admin approves it: the creator
	// may not decide on their own gate.
	author := []string{"--as=e2e-author", "--as-group=system:masters"}
	out, err := kubectl(t, c, append([]string{"apply", "-f", path}, author...)...)
	require.NoError(t, err, out)

	require.Eventually(t, func() bool {
		out, err = plugin("get", "workflow", name)
		return err == nil && strings.Contains(out, "publish Q3 report?")
	}, timeout, 500*time.Millisecond, "the review step never waited with the draft's title")
	t.Logf("kubectl opsnorth get workflow %s\n%s", name, out)

	out, err = plugin(append([]string{"approve", name, "review"}, author...)...)
	require.Error(t, err, "the author approved their own workflow: %s", out)
	assert.Contains(t, out, "the workflow's creator (e2e-author) decides on its approval steps only when approvers.allowSelfApproval is set")

	out, err = plugin("approve", name, "review", "--comment", "ship it")
	require.NoError(t, err, out)
	assert.Contains(t, out, "step review approved by ")
	approved := out

	out, err = plugin("watch", "workflow", name, "--timeout", "120s")
	require.NoError(t, err, "watch ends 0 when the workflow succeeds: %s", out)
	t.Logf("kubectl opsnorth approve %s review --comment 'ship it'\n%s", name, approved)
	out, err = plugin("get", "workflow", name)
	require.NoError(t, err, out)
	t.Logf("kubectl opsnorth get workflow %s\n%s", name, out)
	out, err = plugin("get", "workflow", name, "-o", "json")
	require.NoError(t, err, out)
	var list unstructured.UnstructuredList
	require.NoError(t, list.UnmarshalJSON([]byte(out)))
	wf := list.Items[0].Object
	phase, _, _ := unstructured.NestedString(wf, "status", "phase")
	assert.Equal(t, "Succeeded", phase)
	steps, _, _ := unstructured.NestedSlice(wf, "status", "stepStatuses")
	require.Len(t, steps, 3)
	review := steps[1].(map[string]any)
	approver := review["approval"].(map[string]any)["by"].(string)
	assert.NotEmpty(t, approver)
	publish, _ := json.Marshal(steps[2].(map[string]any)["output"])
	assert.JSONEq(t, fmt.Sprintf(`{"by":%q,"note":"ship it"}`, approver), string(publish), "the publishing agent got the approver and comment")
}

// pluginRunner builds cmd/kubectl-opsnorth and returns a runner of it as the
// cluster admin in the task namespace.
func pluginRunner(t *testing.T, c *localcluster.Cluster) func(args ...string) (string, error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-opsnorth")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/kubectl-opsnorth")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build kubectl-opsnorth: %s", out)
	return func(args ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), bin, append([]string{"--kubeconfig=" + c.AdminKubeconfig, "-n", taskNamespace}, args...)...)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		return buf.String(), err
	}
}
