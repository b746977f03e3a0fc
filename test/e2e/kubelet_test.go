//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/localcluster/provisioner"
)

// These tests check what the managers make of the kwok node's kubelet-like
// behaviour (scripts/kwok-stages/README.md): capped termination messages,
// images that cannot be used, and volumes of the default StorageClass.

// digitsJSON is a JSON object of exactly n bytes.
func digitsJSON(n int) string {
	const head, tail = `{"result":"`, `"}`
	return head + strings.Repeat("0123456789", n/10+1)[:n-len(head)-len(tail)] + tail
}

// waitTask waits until the task satisfies done and returns it.
func waitTask(t *testing.T, name string, done func(*v1alpha1.AgentTask) bool) *v1alpha1.AgentTask {
	t.Helper()
	cs := scheduler(t, requireCluster(t))
	var got *v1alpha1.AgentTask
	require.Eventually(t, func() bool {
		at, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		got = at
		return done(at)
	}, timeout, tick, "task %s", name)
	return got
}

// TestKubeletTaskOutputCap: the kubelet keeps the last 4096 bytes of an
// agent's termination message; the task's output is what is left, and the
// task says it may have been cut.
func TestKubeletTaskOutputCap(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000
	big := digitsJSON(5000)
	tests := []struct {
		name          string
		message       string
		wantOutput    map[string]string
		wantTruncated bool
	}{
		{"5000 bytes: the last 4096, no longer JSON", big, map[string]string{"result": big[5000-4096:]}, true},
		{"4096 bytes: whole, but at the limit", digitsJSON(4096), map[string]string{"result": digitsJSON(4096)[11 : 4096-2]}, true},
		{"small: whole", digitsJSON(100), map[string]string{"result": digitsJSON(100)[11 : 100-2]}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("e2e-%d-cap-%d", stamp, i)
			_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(),
				agentTask(name, map[string]string{"KWOK_TERMINATION_MESSAGE": tt.message}), metav1.CreateOptions{})
			require.NoError(t, err)
			got := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
			assert.Equal(t, v1alpha1.TaskSucceeded, got.Status.Phase, got.Status.Message)
			assert.Equal(t, tt.wantOutput, got.Status.Output)
			assert.Equal(t, tt.wantTruncated, meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionOutputTruncated))
		})
	}
}

// TestKubeletTaskImages: an image name the kubelet cannot parse fails the
// task at once; one it cannot pull keeps it Pending with the kubelet's
// reason until the start timeout fails it.
func TestKubeletTaskImages(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000

	t.Run("invalid image name", func(t *testing.T) {
		t.Parallel()
		name := fmt.Sprintf("e2e-%d-badimage", stamp)
		at := agentTask(name, nil, func(at *v1alpha1.AgentTask) { at.Spec.Image = "Bad/Image" })
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), at, metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
		assert.Equal(t, v1alpha1.TaskFailed, got.Status.Phase)
		assert.Equal(t, "InvalidImageName", got.Status.Reason)
		assert.Contains(t, got.Status.Message, `couldn't parse image name "Bad/Image": invalid reference format: repository name (Image) must be lowercase`)
	})
	t.Run("unpullable image", func(t *testing.T) {
		t.Parallel()
		name := fmt.Sprintf("e2e-%d-nopull", stamp)
		at := agentTask(name, nil, func(at *v1alpha1.AgentTask) {
			at.Spec.Image = "unreachable.invalid/agent:1"
			at.Spec.StartTimeoutSeconds = new(int64(15))
		})
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), at, metav1.CreateOptions{})
		require.NoError(t, err)
		pullReasons := []string{"ErrImagePull", "ImagePullBackOff"}
		pending := waitTask(t, name, func(at *v1alpha1.AgentTask) bool {
			return at.Status.Phase == v1alpha1.TaskPending && at.Status.Reason != ""
		})
		assert.Contains(t, pullReasons, pending.Status.Reason)
		assert.Contains(t, pending.Status.Message, "lookup unreachable.invalid: no such host")
		failed := waitTask(t, name, func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
		assert.Equal(t, v1alpha1.TaskFailed, failed.Status.Phase)
		assert.Contains(t, pullReasons, failed.Status.Reason)
		assert.Contains(t, failed.Status.Message, "the agent did not start within 15s")
	})
}

// TestKubeletUserDeploymentStorage: an app with storage gets its claim bound
// on the default StorageClass, a volume directory, and becomes ready.
func TestKubeletUserDeploymentStorage(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	ns := newNamespace(t, c)
	name := fmt.Sprintf("e2e-%d-vol", time.Now().Unix()%100000)
	tmpl := &v1alpha1.DeploymentTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.DeploymentTemplateSpec{Services: []v1alpha1.TemplateService{{
			Name: "db", Image: "ghcr.io/opsnorth/db:1",
			Storage: &v1alpha1.Storage{Size: resource.MustParse("2Gi"), MountPath: "/var/lib/db"},
		}}}}
	_, err := cs.SchedulerV1alpha1().DeploymentTemplates().Create(t.Context(), tmpl, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.SchedulerV1alpha1().DeploymentTemplates().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	ud := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.UserDeploymentSpec{UserID: "e2e-" + name, Template: name}}
	created := time.Now()
	_, err = cs.SchedulerV1alpha1().UserDeployments(ns).Create(t.Context(), ud, metav1.CreateOptions{})
	require.NoError(t, err)
	userNS := "user-e2e-" + name
	// The retained claim goes with the user's namespace, and its volume with it.
	t.Cleanup(func() {
		_ = c.Clientset.CoreV1().Namespaces().Delete(context.Background(), userNS, metav1.DeleteOptions{})
	})
	kubectlWait(t, c, ns, "userdeployment/"+name, "Ready")
	t.Logf("UserDeployment with storage create → Ready: %s", time.Since(created).Round(time.Millisecond))

	claim, err := c.Clientset.CoreV1().PersistentVolumeClaims(userNS).Get(t.Context(), name+"-db-data", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.ClaimBound, claim.Status.Phase)
	assert.Equal(t, provisioner.DefaultClassName, *claim.Spec.StorageClassName)
	pv, err := c.Clientset.CoreV1().PersistentVolumes().Get(t.Context(), claim.Spec.VolumeName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, resource.MustParse("2Gi"), pv.Spec.Capacity[corev1.ResourceStorage])
	dir := filepath.Join(c.VolumeDir(), pv.Name)
	assert.DirExists(t, dir)

	// Deleted, the app keeps its claim (storage.whenDeleted defaults to
	// Retain), so the volume and its data stay.
	require.NoError(t, cs.SchedulerV1alpha1().UserDeployments(ns).Delete(t.Context(), name, metav1.DeleteOptions{}))
	var note string
	require.Eventually(t, func() bool { // the manager's last word, before the test's namespace goes
		list, err := c.Clientset.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		for _, e := range list.Items {
			if err == nil && e.Regarding.Name == name && (e.Reason == "ClaimsRetained" || e.Reason == "NamespaceKept") {
				note = e.Note
			}
		}
		return note != ""
	}, timeout, tick, "no event says %s/%s kept its claim", ns, name)
	assert.Contains(t, note, "retained volume claims "+claim.Name)
	claim, err = c.Clientset.CoreV1().PersistentVolumeClaims(userNS).Get(t.Context(), claim.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.ClaimBound, claim.Status.Phase)
	assert.DirExists(t, dir)
}
