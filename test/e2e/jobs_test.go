//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/localcluster"
)

func TestClusterStart(t *testing.T) {
	c := requireCluster(t)
	t.Logf("cluster start (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, node Ready): %s", c.StartedIn.Round(time.Millisecond))
	for _, ph := range c.StartPhases() {
		t.Logf("  %8s  %s", ph.At.Round(time.Millisecond), ph.Name)
	}
	names := map[string]bool{}
	for _, p := range c.Processes() {
		names[p.Name] = true
		assert.False(t, p.Exited(), "%s exited: %v", p.Name, p.Err())
	}
	assert.Equal(t, map[string]bool{
		"etcd": true, "kube-apiserver": true, "kube-controller-manager": true, "kube-scheduler": true, "kwok": true,
		"deployments": true, "tasks": true, "workflows": true,
	}, names)

	node, err := c.Clientset.CoreV1().Nodes().Get(t.Context(), localcluster.NodeName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, node.Spec.Taints)
	for _, crd := range []string{"agenttasks.scheduler.opsnorth.io", "workflows.scheduler.opsnorth.io", "userdeployments.scheduler.opsnorth.io", "ingressroutes.traefik.io"} {
		_, err := c.Clientset.Discovery().ServerResourcesForGroupVersion(groupVersionOf(crd))
		assert.NoError(t, err, "CRD %s installed", crd)
	}
}

func groupVersionOf(crd string) string {
	switch crd {
	case "ingressroutes.traefik.io":
		return "traefik.io/v1alpha1"
	default:
		return "scheduler.opsnorth.io/v1alpha1"
	}
}

func TestJobCompletes(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	created := time.Now()
	_, err := c.Clientset.BatchV1().Jobs(ns).Create(t.Context(), job(ns, "plain"), metav1.CreateOptions{})
	require.NoError(t, err)
	j := waitJob(t, c.Clientset, ns, "plain", batchv1.JobComplete)
	t.Logf("Job create → Complete latency: %s (pod run time: the stages' default 1s)", time.Since(created).Round(time.Millisecond))

	assert.Equal(t, int32(1), j.Status.Succeeded)
	pod := jobPod(t, c.Clientset, j)
	assert.Equal(t, localcluster.NodeName, pod.Spec.NodeName)
	assert.Equal(t, corev1.PodSucceeded, pod.Status.Phase)
	st := terminated(t, pod)
	assert.Equal(t, int32(0), st.ExitCode)
	assert.Equal(t, "Completed", st.Reason)
	assert.Empty(t, st.Message)
	assert.NotEmpty(t, pod.Status.PodIP, "kwok gives a running pod an IP")
}

func TestJobExitCode(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	tests := []struct {
		name string
		mod  func(*batchv1.Job)
		want int32
	}{
		{"annotation", withAnnotation(exitKey, "3"), 3},
		{"label", withLabel(exitKey, "4"), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "exit-" + tt.name
			_, err := c.Clientset.BatchV1().Jobs(ns).Create(t.Context(), job(ns, name, tt.mod), metav1.CreateOptions{})
			require.NoError(t, err)
			j := waitJob(t, c.Clientset, ns, name, batchv1.JobFailed)
			assert.Equal(t, "BackoffLimitExceeded", jobCondition(j, batchv1.JobFailed).Reason)
			pod := jobPod(t, c.Clientset, j)
			assert.Equal(t, corev1.PodFailed, pod.Status.Phase)
			st := terminated(t, pod)
			assert.Equal(t, tt.want, st.ExitCode)
			assert.Equal(t, "Error", st.Reason)
		})
	}
}

func TestJobTerminationMessage(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	const message = "{\"summary\": \"done: 3 files\", \"url\": \"https://example.com/a?b=c\"}\nsecond line"
	tests := []struct {
		name  string
		mods  []func(*batchv1.Job)
		phase corev1.PodPhase
		exit  int32
	}{
		{"succeeded", []func(*batchv1.Job){withAnnotation(messageKey, message)}, corev1.PodSucceeded, 0},
		{"failed", []func(*batchv1.Job){withAnnotation(messageKey, message), withAnnotation(exitKey, "2")}, corev1.PodFailed, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "message-" + tt.name
			_, err := c.Clientset.BatchV1().Jobs(ns).Create(t.Context(), job(ns, name, tt.mods...), metav1.CreateOptions{})
			require.NoError(t, err)
			want := batchv1.JobComplete
			if tt.phase == corev1.PodFailed {
				want = batchv1.JobFailed
			}
			pod := jobPod(t, c.Clientset, waitJob(t, c.Clientset, ns, name, want))
			assert.Equal(t, tt.phase, pod.Status.Phase)
			st := terminated(t, pod)
			assert.Equal(t, message, st.Message)
			assert.Equal(t, tt.exit, st.ExitCode)
		})
	}
}

func TestJobDelay(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	tests := []struct {
		name string
		mod  func(*batchv1.Job)
	}{
		{"annotation", withAnnotation(delayKey, "4s")},
		{"label", withLabel(delayKey, "4s")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "delay-" + tt.name
			_, err := c.Clientset.BatchV1().Jobs(ns).Create(t.Context(), job(ns, name, tt.mod), metav1.CreateOptions{})
			require.NoError(t, err)
			pod := jobPod(t, c.Clientset, waitJob(t, c.Clientset, ns, name, batchv1.JobComplete))
			require.NotNil(t, pod.Status.StartTime)
			ran := terminated(t, pod).FinishedAt.Sub(pod.Status.StartTime.Time)
			t.Logf("pod ran %s (asked 4s; timestamps have 1s resolution)", ran)
			assert.GreaterOrEqual(t, ran, 3*time.Second, "the pod must run at least its delay")
		})
	}
}

func TestJobDeadlineExceeded(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	j := job(ns, "deadline", withAnnotation(delayKey, "30s"))
	j.Spec.ActiveDeadlineSeconds = new(int64(2))
	created := time.Now()
	_, err := c.Clientset.BatchV1().Jobs(ns).Create(t.Context(), j, metav1.CreateOptions{})
	require.NoError(t, err)
	got := waitJob(t, c.Clientset, ns, "deadline", batchv1.JobFailed)
	elapsed := time.Since(created)
	t.Logf("Job with a 2s deadline and a 30s pod failed after %s", elapsed.Round(time.Millisecond))
	assert.Equal(t, "DeadlineExceeded", jobCondition(got, batchv1.JobFailed).Reason)
	assert.Less(t, elapsed, 30*time.Second, "the deadline, not the pod, ended the Job")
	require.Eventually(t, func() bool {
		pods, err := c.Clientset.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=deadline"})
		return err == nil && len(pods.Items) == 0
	}, timeout, tick, "the Job controller deletes the running pod and kwok removes it")
}
