package localcluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jsonMessage is a JSON object of exactly n bytes whose digits tell where a cut fell.
func jsonMessage(n int) string {
	const head, tail = `{"result":"`, `"}`
	digits := strings.Repeat("0123456789", n/10+1)[:n-len(head)-len(tail)]
	return head + digits + tail
}

// TestTerminationMessageCap checks that a container's termination message
// comes out as the kubelet v1.37 leaves it: the last 4096 bytes, then at most
// 12288 / (containers + init containers) bytes of those, each byte of a
// UTF-8 character the cuts split shown as U+FFFD.
func TestTerminationMessageCap(t *testing.T) {
	c := liveCluster(t)
	ns := testNamespace(t, c)
	big := jsonMessage(5000)
	euro := strings.Repeat("a", 903) + "€" + strings.Repeat("b", 4094) // 5000 bytes; the last 4096 start inside "€"
	tests := []struct {
		name       string
		message    string
		exitCode   string
		containers int
		inits      int
		want       string
		wantPhase  corev1.PodPhase
	}{
		{"5000-byte JSON keeps its last 4096 bytes", big, "0", 1, 0, big[5000-4096:], corev1.PodSucceeded},
		{"exactly 4096 bytes come out whole", jsonMessage(4096), "0", 1, 0, jsonMessage(4096), corev1.PodSucceeded},
		{"a failed container's message is capped alike", big, "3", 1, 0, big[5000-4096:], corev1.PodFailed},
		{"three containers each keep 4096 bytes", big, "0", 3, 0, big[5000-4096:], corev1.PodSucceeded},
		{"four containers share 12 KiB: the first 3072 of the last 4096 bytes", big, "0", 4, 0, big[5000-4096 : 5000-4096+3072], corev1.PodSucceeded},
		{"an init container counts against the pod's 12 KiB", big, "0", 3, 1, big[5000-4096 : 5000-4096+3072], corev1.PodSucceeded},
		{"five containers keep 2457 bytes each", big, "0", 5, 0, big[5000-4096 : 5000-4096+2457], corev1.PodSucceeded},
		{"a cut inside a UTF-8 character leaves U+FFFD for each stray byte", euro, "0", 1, 0, "\uFFFD\uFFFD" + strings.Repeat("b", 4094), corev1.PodSucceeded},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := testPod(ns, fmt.Sprintf("message-%d", i), map[string]string{
				"kwok.opsnorth.io/delay":               "200ms",
				"kwok.opsnorth.io/exit-code":           tt.exitCode,
				"kwok.opsnorth.io/termination-message": tt.message,
			})
			pod.Spec.Containers = nil
			for n := range tt.containers {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", n), Image: "ghcr.io/opsnorth/agent:test"})
			}
			for n := range tt.inits {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: fmt.Sprintf("init%d", n), Image: "ghcr.io/opsnorth/init:test"})
			}
			_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
			got := watchPod(t, c, ns, pod.Name, func(p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
			})
			assert.Equal(t, tt.wantPhase, got.Status.Phase)
			require.Len(t, got.Status.ContainerStatuses, tt.containers)
			for _, cs := range got.Status.ContainerStatuses {
				require.NotNil(t, cs.State.Terminated, "container %s", cs.Name)
				assert.Equal(t, len(tt.want), len(cs.State.Terminated.Message), "container %s: message bytes", cs.Name)
				assert.Equal(t, tt.want, cs.State.Terminated.Message, "container %s", cs.Name)
			}
		})
	}
}
