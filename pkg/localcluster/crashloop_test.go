package localcluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerState is "Running", "Terminated", or the waiting reason, with the restart count.
func containerState(cs corev1.ContainerStatus) string {
	state := "Running"
	switch {
	case cs.State.Terminated != nil:
		state = "Terminated"
	case cs.State.Waiting != nil:
		state = cs.State.Waiting.Reason
	}
	return fmt.Sprintf("%s/%d", state, cs.RestartCount)
}

// crashLoop polls the only pod matching selector until its container waits
// in CrashLoopBackOff at restart count 2 and returns the distinct states
// seen, every pod version that waited in CrashLoopBackOff, and the phases seen.
func crashLoop(t *testing.T, c *Cluster, namespace, selector string) ([]string, []*corev1.Pod, map[corev1.PodPhase]bool) {
	t.Helper()
	var states []string
	var backoffs []*corev1.Pod
	phases := map[corev1.PodPhase]bool{}
	require.Eventually(t, func() bool {
		pods, err := c.Clientset.CoreV1().Pods(namespace).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) == 0 {
			return false
		}
		p := &pods.Items[0]
		phases[p.Status.Phase] = true
		state := containerState(p.Status.ContainerStatuses[0])
		if len(states) == 0 || states[len(states)-1] != state {
			states = append(states, state)
			if p.Status.ContainerStatuses[0].State.Waiting != nil {
				backoffs = append(backoffs, p)
			}
		}
		return state == "CrashLoopBackOff/2"
	}, liveTimeout, pollInterval/2, "pod %s in %s never reached its second back-off", selector, namespace)
	return states, backoffs, phases
}

// TestCrashLoop checks that a container that exits and is restarted goes,
// as on a kubelet: Running, Terminated, restarted at once (restart count
// 1), Terminated, CrashLoopBackOff naming its back-off, Running (2), ...,
// the pod Running and not Ready while it waits.
func TestCrashLoop(t *testing.T) {
	c := liveCluster(t)
	ns := testNamespace(t, c)
	labels := func(app string) map[string]string { return map[string]string{"app": app} }
	tests := []struct {
		name       string
		create     func(t *testing.T, app string)
		wantExit   int32
		wantReason string
	}{
		{"a pod's annotation", func(t *testing.T, app string) {
			pod := testPod(ns, app, map[string]string{"kwok.opsnorth.io/delay": "300ms", "kwok.opsnorth.io/exit-code": "2", "kwok.opsnorth.io/termination-message": "boom"})
			pod.Labels = labels(app)
			pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
			_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
		}, 2, "Error"},
		{"a Deployment's env", func(t *testing.T, app string) {
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels(app)},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels(app)},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "ghcr.io/opsnorth/web:test", Env: []corev1.EnvVar{
							{Name: "KWOK_EXIT_CODE", Value: "3"}, {Name: "KWOK_DELAY", Value: "300ms"}, {Name: "KWOK_TERMINATION_MESSAGE", Value: "boom"},
						}}}},
					},
				},
			}
			_, err := c.Clientset.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{})
			require.NoError(t, err)
		}, 3, "Error"},
		{"a Deployment's shell exit", func(t *testing.T, app string) {
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels(app)},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels(app)},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "ghcr.io/opsnorth/web:test",
							Command: []string{"sh", "-c"}, Args: []string{"echo exit 9 is not it\nserve || exit 4 "},
							Env: []corev1.EnvVar{{Name: "KWOK_DELAY", Value: "300ms"}, {Name: "KWOK_TERMINATION_MESSAGE", Value: "boom"}},
						}}},
					},
				},
			}
			_, err := c.Clientset.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{})
			require.NoError(t, err)
		}, 4, "Error"},
		{"restartPolicy Always restarts a container that exits 0", func(t *testing.T, app string) {
			pod := testPod(ns, app, map[string]string{"kwok.opsnorth.io/delay": "300ms", "kwok.opsnorth.io/exit-code": "0", "kwok.opsnorth.io/termination-message": "boom"})
			pod.Labels = labels(app)
			pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
			_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
		}, 0, "Completed"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := fmt.Sprintf("crash-%d", i)
			tt.create(t, app)
			states, backoffs, phases := crashLoop(t, c, ns, "app="+app)
			assert.Equal(t, []string{"Running/0", "Terminated/0", "Running/1", "Terminated/1", "CrashLoopBackOff/1", "Running/2", "Terminated/2", "CrashLoopBackOff/2"}, states)
			assert.Equal(t, map[corev1.PodPhase]bool{corev1.PodRunning: true}, phases, "a restarting pod stays Running")
			require.Len(t, backoffs, 2)
			for n, p := range backoffs {
				cs := p.Status.ContainerStatuses[0]
				want := fmt.Sprintf("back-off %ds restarting failed container=%s pod=%s_%s(%s)", 1<<n, cs.Name, p.Name, p.Namespace, p.UID)
				assert.Equal(t, want, cs.State.Waiting.Message)
				require.NotNil(t, cs.LastTerminationState.Terminated)
				assert.Equal(t, tt.wantExit, cs.LastTerminationState.Terminated.ExitCode)
				assert.Equal(t, tt.wantReason, cs.LastTerminationState.Terminated.Reason)
				assert.Equal(t, "boom", cs.LastTerminationState.Terminated.Message)
				assert.False(t, cs.Ready)
				assert.Equal(t, corev1.ConditionFalse, condition(p, corev1.PodReady).Status)
				assert.Equal(t, "containers with unready status: ["+cs.Name+"]", condition(p, corev1.PodReady).Message)
			}
		})
	}
	t.Run("a Job's OnFailure pod restarts until the Job's backoffLimit fails it", func(t *testing.T) {
		t.Parallel()
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "on-failure"},
			Spec: batchv1.JobSpec{
				BackoffLimit: new(int32(2)),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kwok.opsnorth.io/delay": "300ms", "kwok.opsnorth.io/exit-code": "1"}},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyOnFailure,
						Containers:    []corev1.Container{{Name: "main", Image: "ghcr.io/opsnorth/agent:test"}},
					},
				},
			},
		}
		_, err := c.Clientset.BatchV1().Jobs(ns).Create(t.Context(), j, metav1.CreateOptions{})
		require.NoError(t, err)
		var failed *batchv1.JobCondition
		require.Eventually(t, func() bool {
			got, err := c.Clientset.BatchV1().Jobs(ns).Get(t.Context(), j.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
					failed = &cond
				}
			}
			return failed != nil
		}, liveTimeout, pollInterval)
		assert.Equal(t, "BackoffLimitExceeded", failed.Reason)
	})
	t.Run("a pod naming no exit code runs until deleted", func(t *testing.T) {
		t.Parallel()
		pod := testPod(ns, "runs", map[string]string{"kwok.opsnorth.io/delay": "300ms"})
		pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
		_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
		require.NoError(t, err)
		watchPod(t, c, ns, pod.Name, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		time.Sleep(2 * time.Second)
		got, err := c.Clientset.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, corev1.PodRunning, got.Status.Phase)
		assert.Equal(t, "Running/0", containerState(got.Status.ContainerStatuses[0]))
	})
}
