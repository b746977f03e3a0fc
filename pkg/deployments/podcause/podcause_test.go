package podcause

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		pods []*corev1.Pod
		// want is "<reason>: <message>", "" for no cause.
		want string
	}{
		{name: "no pods"},
		{
			name: "progress: scheduled, creating, running not ready, first exit",
			pods: []*corev1.Pod{
				makePod("a").obj(),
				makePod("b").waiting("ContainerCreating", "").obj(),
				makePod("c").running(false).obj(),
				makePod("d").container(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}).obj(),
				makePod("e").initWaiting("PodInitializing", "").obj(),
			},
		},
		{
			name: "unschedulable",
			pods: []*corev1.Pod{makePod("web-5d9c7-aaaaa").unschedulable(schedMsg).obj()},
			want: "Unschedulable: pod web-5d9c7-aaaaa cannot be scheduled: " + schedMsg,
		},
		{
			name: "unschedulable without a message names the reason",
			pods: []*corev1.Pod{makePod("p").unschedulable("").obj()},
			want: "Unschedulable: pod p cannot be scheduled: Unschedulable",
		},
		{
			name: "image pull failing, in either of the kubelet's states, reads the same",
			pods: []*corev1.Pod{
				makePod("web-5d9c7-aaaaa").waiting("ImagePullBackOff", `Back-off pulling image "ghcr.io/opsnorth/web:1": ErrImagePull: `+pullMsg).obj(),
				makePod("web-5d9c7-bbbbb").waiting("ErrImagePull", pullMsg).obj(),
			},
			want: "ImagePullFailed: pod web-5d9c7-aaaaa cannot pull the image of container web: " + pullMsg + " (and 1 more pod)",
		},
		{
			name: "three pods alike count two more",
			pods: []*corev1.Pod{
				makePod("a").waiting("ErrImagePull", pullMsg).obj(),
				makePod("b").waiting("ErrImagePull", pullMsg).obj(),
				makePod("c").waiting("ErrImagePull", pullMsg).obj(),
			},
			want: "ImagePullFailed: pod a cannot pull the image of container web: " + pullMsg + " (and 2 more pods)",
		},
		{
			name: "an older kubelet's back-off message is kept",
			pods: []*corev1.Pod{makePod("p").waiting("ImagePullBackOff", `Back-off pulling image "ghcr.io/opsnorth/web:1"`).obj()},
			want: `ImagePullFailed: pod p cannot pull the image of container web: Back-off pulling image "ghcr.io/opsnorth/web:1"`,
		},
		{
			name: "invalid image name",
			pods: []*corev1.Pod{makePod("p").waiting("InvalidImageName", `Failed to apply default image tag "Bad/Image": couldn't parse image name "Bad/Image": invalid reference format`).obj()},
			want: `InvalidImage: pod p: container web has an invalid image name: Failed to apply default image tag "Bad/Image": couldn't parse image name "Bad/Image": invalid reference format`,
		},
		{
			name: "missing ConfigMap",
			pods: []*corev1.Pod{makePod("p").waiting("CreateContainerConfigError", `configmap "web-env" not found`).obj()},
			want: `ContainerConfigError: pod p cannot configure container web: configmap "web-env" not found`,
		},
		{
			name: "missing Secret of an init container",
			pods: []*corev1.Pod{makePod("p").initWaiting("CreateContainerConfigError", `secret "shop-secrets" not found`).obj()},
			want: `ContainerConfigError: pod p cannot configure container migrate: secret "shop-secrets" not found`,
		},
		{
			name: "the runtime cannot start the container",
			pods: []*corev1.Pod{makePod("p").waiting("RunContainerError", `exec: "/web": stat /web: no such file or directory`).obj()},
			want: `ContainerStartFailed: pod p cannot start container web (RunContainerError): exec: "/web": stat /web: no such file or directory`,
		},
		{
			name: "crash looping in back-off",
			pods: []*corev1.Pod{makePod("p").crashed(3, 1, "Error", "panic: no DATABASE_URL\n", backOff).obj()},
			want: "CrashLooping: pod p: container web is crash looping, last exit code 1 (Error): panic: no DATABASE_URL",
		},
		{
			name: "crash looping between back-offs: running again, not ready",
			pods: []*corev1.Pod{makePod("p").crashed(4, 137, "OOMKilled", "", corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}).obj()},
			want: "CrashLooping: pod p: container web is crash looping, last exit code 137 (OOMKilled)",
		},
		{
			name: "crash looping between back-offs: just exited again",
			pods: []*corev1.Pod{makePod("p").container(corev1.ContainerStatus{RestartCount: 2,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}).obj()},
			want: "CrashLooping: pod p: container web is crash looping, last exit code 2 (Error)",
		},
		{
			name: "a container that restarted once and is ready blocks nothing",
			pods: []*corev1.Pod{makePod("p").container(corev1.ContainerStatus{Ready: true, RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}).obj()},
		},
		{
			name: "pods being deleted or ended block nothing",
			pods: []*corev1.Pod{
				makePod("old").waiting("ErrImagePull", pullMsg).deleting().obj(),
				makePod("evicted").unschedulable(schedMsg).phase(corev1.PodFailed).obj(),
				makePod("done").crashed(1, 1, "Error", "", backOff).phase(corev1.PodSucceeded).obj(),
			},
		},

		// Priority, when several apply: the root first.
		{
			name: "unschedulable before container causes, whatever the pod order",
			pods: []*corev1.Pod{
				makePod("a").crashed(3, 1, "Error", "", backOff).obj(),
				makePod("b").waiting("ErrImagePull", pullMsg).obj(),
				makePod("c").unschedulable(schedMsg).obj(),
			},
			want: "Unschedulable: pod c cannot be scheduled: " + schedMsg,
		},
		{
			name: "invalid image, image pull, configuration, start, crash loop",
			pods: []*corev1.Pod{
				makePod("a").crashed(3, 1, "Error", "", backOff).obj(),
				makePod("b").waiting("RunContainerError", "x").obj(),
				makePod("c").waiting("CreateContainerConfigError", `configmap "x" not found`).obj(),
				makePod("d").waiting("ErrImagePull", pullMsg).obj(),
				makePod("e").waiting("InvalidImageName", "bad").obj(),
			},
			want: "InvalidImage: pod e: container web has an invalid image name: bad",
		},
		{
			name: "configuration before crash loop in one pod",
			pods: []*corev1.Pod{makePod("p").crashed(3, 1, "Error", "", backOff).
				container(corev1.ContainerStatus{Name: "sidecar", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: "CreateContainerConfigError", Message: `secret "s" not found`}}}).obj()},
			want: `ContainerConfigError: pod p cannot configure container sidecar: secret "s" not found`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, describe(Of(tt.pods)))

			// Caches hold trimmed pods: they must decide the same.
			trimmed := make([]*corev1.Pod, len(tt.pods))
			for i, p := range tt.pods {
				trimmed[i] = Trim(p.DeepCopy())
				assert.Equal(t, OfPod(p), OfPod(trimmed[i]), "pod %s trimmed", p.Name)
			}
			assert.Equal(t, tt.want, describe(Of(trimmed)), "from trimmed pods")
		})
	}
}

func describe(c *Cause) string {
	if c == nil {
		return ""
	}
	return c.Reason + ": " + c.Message
}

func TestRanks(t *testing.T) {
	assert.Less(t, RankUnschedulable, RankInvalidImage)
	assert.Less(t, RankInvalidImage, RankImagePull)
	assert.Less(t, RankImagePull, RankContainerConfig)
	assert.Less(t, RankContainerConfig, RankContainerStart)
	assert.Less(t, RankContainerStart, RankCrashLoop)
	assert.Equal(t, Rank(0), RankUnschedulable, "the negative ranks are the callers'")
}

func TestBoundedMessage(t *testing.T) {
	long := strings.Repeat("0/5000 nodes are available: é ", 200)
	c := OfPod(makePod("p").unschedulable(long).obj())
	require.NotNil(t, c)
	prefix := "pod p cannot be scheduled: "
	assert.LessOrEqual(t, len(c.Message), len(prefix)+MaxMessage)
	assert.True(t, strings.HasSuffix(c.Message, "…"))
	assert.True(t, strings.HasPrefix(c.Message, prefix+"0/5000 nodes are available"))
	assert.True(t, strings.ToValidUTF8(c.Message, "?") == c.Message, "cut on a character boundary")

	crash := OfPod(makePod("p").crashed(3, 1, "Error", strings.Repeat("x", 4096), backOff).obj())
	require.NotNil(t, crash)
	assert.LessOrEqual(t, len(crash.Message), len("pod p: container web is crash looping, last exit code 1 (Error): ")+MaxMessage)
}

func TestChanged(t *testing.T) {
	pending := makePod("p").obj()
	pulling := makePod("p").waiting("ErrImagePull", pullMsg).obj()
	backingOff := makePod("p").waiting("ImagePullBackOff", `Back-off pulling image "ghcr.io/opsnorth/web:1": ErrImagePull: `+pullMsg).obj()
	crash1 := makePod("p").crashed(3, 1, "Error", "", backOff).obj()
	crash2 := makePod("p").crashed(4, 1, "Error", "", corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}).obj()
	crashOther := makePod("p").crashed(5, 2, "Error", "", backOff).obj()
	ready := makePod("p").running(true).obj()
	tests := []struct {
		name     string
		old, cur *corev1.Pod
		want     bool
	}{
		{name: "created without a cause", cur: pending},
		{name: "created with a cause", cur: pulling, want: true},
		{name: "scheduled, started, ready", old: pending, cur: ready},
		{name: "cause appears", old: pending, cur: pulling, want: true},
		{name: "the kubelet's pull states alternate", old: pulling, cur: backingOff},
		{name: "a crash loop restarts with the same exit", old: crash1, cur: crash2},
		{name: "a crash loop exits otherwise", old: crash2, cur: crashOther, want: true},
		{name: "cause goes", old: crash2, cur: ready, want: true},
		{name: "deleted with a cause", old: pulling, want: true},
		{name: "deleted without a cause", old: ready},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Changed(tt.old, tt.cur))
		})
	}
}

func TestTrim(t *testing.T) {
	p := makePod("p").crashed(3, 1, "Error", "boom", backOff).unschedulable(schedMsg).obj()
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	p.Annotations = map[string]string{"big": strings.Repeat("x", 1000)}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
	p.Status.ContainerStatuses[0].State.Waiting.Message = strings.Repeat("m", 2000)

	o, err := Transform("app", "missing")(p)
	require.NoError(t, err)
	got := o.(*corev1.Pod)
	assert.Equal(t, map[string]string{"app": "web", "missing": ""}, got.Labels, "the labels asked for, each present")
	assert.Equal(t, "team", got.Namespace)
	assert.Empty(t, got.Annotations)
	assert.Empty(t, got.ManagedFields)
	assert.Empty(t, got.Spec.Containers)
	assert.Len(t, got.Status.Conditions, 1, "only PodScheduled=False")
	cs := got.Status.ContainerStatuses[0]
	assert.Empty(t, cs.Image)
	assert.Empty(t, cs.ContainerID)
	assert.Equal(t, int32(3), cs.RestartCount)
	assert.Len(t, cs.State.Waiting.Message, MaxMessage, "cut to the bound, mark included")
	assert.Equal(t, "boom", cs.LastTerminationState.Terminated.Message)
	assert.True(t, cs.LastTerminationState.Terminated.FinishedAt.IsZero(), "no times")

	other := &corev1.ConfigMap{}
	same, err := Transform()(other)
	require.NoError(t, err)
	assert.Same(t, other, same, "other objects pass unchanged")
}
