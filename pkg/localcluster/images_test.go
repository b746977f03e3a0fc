package localcluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitingReasons polls the pod and returns the distinct waiting reasons of
// its container in the order seen ("Running" when it runs), until until
// returns true for them; it fails the test if the pod ever left Pending.
func waitingReasons(t *testing.T, c *Cluster, pod *corev1.Pod, container string, until func([]string) bool) ([]string, *corev1.Pod) {
	t.Helper()
	var seen []string
	phases := map[corev1.PodPhase]bool{}
	last := watchPod(t, c, pod.Namespace, pod.Name, func(p *corev1.Pod) bool {
		phases[p.Status.Phase] = true
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != container {
				continue
			}
			reason := "Running"
			if cs.State.Waiting != nil {
				reason = cs.State.Waiting.Reason
			}
			if len(seen) == 0 || seen[len(seen)-1] != reason {
				seen = append(seen, reason)
			}
		}
		return until(seen)
	})
	assert.Equal(t, map[corev1.PodPhase]bool{corev1.PodPending: true}, phases, "a pod whose image cannot be used stays Pending")
	return seen, last
}

func TestImagePullFailures(t *testing.T) {
	c := liveCluster(t)
	ns := testNamespace(t, c)
	const dnsFailure = `rpc error: code = Unknown desc = failed to pull and unpack image "unreachable.invalid/app:1": failed to resolve reference "unreachable.invalid/app:1": failed to do request: Head "https://unreachable.invalid/v2/app/manifests/1": dial tcp: lookup unreachable.invalid: no such host`
	tests := []struct {
		name        string
		image       string
		annotations map[string]string
		// wantAgain waits for the pull after the back-off (10 s more).
		wantAgain   bool
		wantPull    string
		wantBackOff string
	}{
		{
			name:        "an unresolvable registry fails, backs off and pulls again",
			image:       "unreachable.invalid/app:1",
			wantAgain:   true,
			wantPull:    dnsFailure,
			wantBackOff: `Back-off pulling image "unreachable.invalid/app:1": ErrImagePull: ` + dnsFailure,
		},
		{
			name:        "image-pull annotation: not found, with containerd's name for the image",
			image:       "nginx",
			annotations: map[string]string{"kwok.opsnorth.io/image-pull": "fail"},
			wantPull:    `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:latest": failed to resolve reference "docker.io/library/nginx:latest": docker.io/library/nginx:latest: not found`,
			wantBackOff: `Back-off pulling image "nginx:latest": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:latest": failed to resolve reference "docker.io/library/nginx:latest": docker.io/library/nginx:latest: not found`,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := testPod(ns, fmt.Sprintf("pull-%d", i), tt.annotations)
			pod.Spec.Containers[0].Image = tt.image
			_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
			want := []string{"ErrImagePull", "ImagePullBackOff"}
			if tt.wantAgain {
				want = append(want, "ErrImagePull")
			}
			seen, last := waitingReasons(t, c, pod, "main", func(seen []string) bool { return len(seen) >= len(want) })
			assert.Equal(t, want, seen)
			cs := last.Status.ContainerStatuses[0]
			wantMessage := tt.wantBackOff
			if tt.wantAgain {
				wantMessage = tt.wantPull
			}
			assert.Equal(t, wantMessage, cs.State.Waiting.Message)
			assert.False(t, cs.Ready)
			assert.Equal(t, int32(0), cs.RestartCount)
			ready := condition(last, corev1.PodReady)
			assert.Equal(t, corev1.ConditionFalse, ready.Status)
			assert.Equal(t, "containers with unready status: [main]", ready.Message)
			assert.NotEmpty(t, last.Status.PodIP, "the pod's sandbox has an IP, as on a kubelet")
		})
	}
}

// TestInvalidImageName checks the kubelet's InvalidImageName for image names
// github.com/distribution/reference v0.6.0 refuses (messages as that
// library and the kubelet v1.37 print them), and that it never changes.
func TestInvalidImageName(t *testing.T) {
	c := liveCluster(t)
	ns := testNamespace(t, c)
	msg := func(image, err string) string {
		return fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: %s", image, image, err)
	}
	hex64 := strings.Repeat("a", 64)
	tests := []struct {
		image string
		want  string
	}{
		{"Bad/Image", msg("Bad/Image", "invalid reference format: repository name (Image) must be lowercase")},
		{"UPPER", msg("UPPER", "invalid reference format: repository name (library/UPPER) must be lowercase")},
		{"bad image", msg("bad image", "invalid reference format")},
		{"x@sha256:0123", msg("x@sha256:0123", "invalid reference format")},
		{"x@sha256:" + strings.Repeat("0", 32), msg("x@sha256:"+strings.Repeat("0", 32), "invalid checksum digest length")},
		{"x@md5:" + strings.Repeat("0", 32), msg("x@md5:"+strings.Repeat("0", 32), "unsupported digest algorithm")},
		{hex64, msg(hex64, "invalid repository name ("+hex64+"), cannot specify 64-byte hexadecimal strings")},
		{"a/" + strings.Repeat("b", 254), msg("a/"+strings.Repeat("b", 254), "repository name must not be more than 255 characters")},
	}
	for i, tt := range tests {
		t.Run(tt.image[:min(len(tt.image), 20)], func(t *testing.T) {
			t.Parallel()
			pod := testPod(ns, fmt.Sprintf("invalid-%d", i), nil)
			pod.Spec.Containers = []corev1.Container{
				{Name: "bad", Image: tt.image},
				{Name: "good", Image: "ghcr.io/opsnorth/agent:test"},
			}
			_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
			seen, _ := waitingReasons(t, c, pod, "bad", func(seen []string) bool { return len(seen) > 0 })
			assert.Equal(t, []string{"InvalidImageName"}, seen)
			time.Sleep(2 * time.Second) // longer than any stage's delay but the pull back-off
			got, err := c.Clientset.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, corev1.PodPending, got.Status.Phase)
			byName := map[string]corev1.ContainerStatus{}
			for _, cs := range got.Status.ContainerStatuses {
				byName[cs.Name] = cs
			}
			require.NotNil(t, byName["bad"].State.Waiting)
			assert.Equal(t, "InvalidImageName", byName["bad"].State.Waiting.Reason)
			assert.Equal(t, tt.want, byName["bad"].State.Waiting.Message)
			assert.NotNil(t, byName["good"].State.Running, "the other container runs, as on a kubelet")
			assert.True(t, byName["good"].Ready)
			assert.Equal(t, "containers with unready status: [bad]", condition(got, corev1.PodReady).Message)
		})
	}
	t.Run("valid references run", func(t *testing.T) {
		t.Parallel()
		images := []string{"nginx", "localhost:5000/x", "Foo.com/bar", "x:Tag", "[::1]:5000/x", "x@sha512:" + strings.Repeat("a", 128)}
		pod := testPod(ns, "valid", nil)
		pod.Spec.Containers = nil
		for n, image := range images {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", n), Image: image})
		}
		_, err := c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
		require.NoError(t, err)
		got := watchPod(t, c, ns, pod.Name, func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })
		assert.Equal(t, corev1.PodRunning, got.Status.Phase)
		assert.True(t, slices.ContainsFunc(got.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		}))
	})
}
