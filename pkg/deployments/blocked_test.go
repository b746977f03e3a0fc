package deployments

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/refusal"
)

func TestServiceBlocked(t *testing.T) {
	noClass := claim(corev1.ClaimPending, nil, nil)
	tests := []struct {
		name   string
		d      *appsv1.Deployment
		pods   []*corev1.Pod
		claims []claimState
		// want is "<reason>: <message>", "" for no cause.
		want string
	}{
		{name: "no pods yet", d: makeDeployment().obj()},
		{
			name: "progress: scheduled, creating, running not ready, first exit",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{
				makePod("a").obj(),
				makePod("b").waiting("ContainerCreating", "").obj(),
				makePod("c").running(false).obj(),
				makePod("d").container(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}).obj(),
				makePod("e").initWaiting("PodInitializing", "").obj(),
			},
			claims: []claimState{claim(corev1.ClaimBound, ptr.To("fast"), nil), {Name: "not-cached-yet"}},
		},
		{
			name: "unschedulable",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("shop-web-5d9c7-aaaaa").unschedulable(schedMsg).obj()},
			want: "Unschedulable: pod shop-web-5d9c7-aaaaa cannot be scheduled: " + schedMsg,
		},
		{
			name: "image pull failing, in either of the kubelet's states, reads the same",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{
				makePod("shop-web-5d9c7-aaaaa").waiting("ImagePullBackOff", `Back-off pulling image "ghcr.io/opsnorth/web:1": ErrImagePull: `+pullMsg).obj(),
				makePod("shop-web-5d9c7-bbbbb").waiting("ErrImagePull", pullMsg).obj(),
			},
			want: "ImagePullFailed: pod shop-web-5d9c7-aaaaa cannot pull the image of container web: " + pullMsg + " (and 1 more pod)",
		},
		{
			name: "an older kubelet's back-off message is kept",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").waiting("ImagePullBackOff", `Back-off pulling image "ghcr.io/opsnorth/web:1"`).obj()},
			want: `ImagePullFailed: pod p cannot pull the image of container web: Back-off pulling image "ghcr.io/opsnorth/web:1"`,
		},
		{
			name: "invalid image name",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").waiting("InvalidImageName", `Failed to apply default image tag "Bad/Image": couldn't parse image name "Bad/Image": invalid reference format`).obj()},
			want: `InvalidImage: pod p: container web has an invalid image name: Failed to apply default image tag "Bad/Image": couldn't parse image name "Bad/Image": invalid reference format`,
		},
		{
			name: "missing ConfigMap",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").waiting("CreateContainerConfigError", `configmap "shop-web-env" not found`).obj()},
			want: `ContainerConfigError: pod p cannot configure container web: configmap "shop-web-env" not found`,
		},
		{
			name: "missing Secret of an init container",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").initWaiting("CreateContainerConfigError", `secret "shop-secrets" not found`).obj()},
			want: `ContainerConfigError: pod p cannot configure container migrate: secret "shop-secrets" not found`,
		},
		{
			name: "the runtime cannot start the container",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").waiting("RunContainerError", `exec: "/web": stat /web: no such file or directory`).obj()},
			want: `ContainerStartFailed: pod p cannot start container web (RunContainerError): exec: "/web": stat /web: no such file or directory`,
		},
		{
			name: "crash looping in back-off",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").crashed(3, 1, "Error", "panic: no DATABASE_URL\n", backOff).obj()},
			want: "CrashLooping: pod p: container web is crash looping, last exit code 1 (Error): panic: no DATABASE_URL",
		},
		{
			name: "crash looping between back-offs: running again, not ready",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").crashed(4, 137, "OOMKilled", "", corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}).obj()},
			want: "CrashLooping: pod p: container web is crash looping, last exit code 137 (OOMKilled)",
		},
		{
			name: "crash looping between back-offs: just exited again",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").container(corev1.ContainerStatus{RestartCount: 2,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}).obj()},
			want: "CrashLooping: pod p: container web is crash looping, last exit code 2 (Error)",
		},
		{
			name: "a container that restarted once and is ready blocks nothing",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").container(corev1.ContainerStatus{Ready: true, RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}).obj()},
		},
		{
			name: "pods being deleted or ended block nothing",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{
				makePod("old").waiting("ErrImagePull", pullMsg).deleting().obj(),
				makePod("evicted").unschedulable(schedMsg).phase(corev1.PodFailed).obj(),
			},
		},
		{
			name: "quota exceeded",
			d:    makeDeployment().replicaFailure(quotaMsg).obj(),
			want: refusal.ReasonQuotaExceeded + ": pods cannot be created: " + quotaMsg,
		},
		{
			name: "Pod Security",
			d:    makeDeployment().replicaFailure(psaMsg).obj(),
			want: refusal.ReasonAdmissionDenied + ": pods cannot be created: " + psaMsg,
		},
		{
			name: "another refusal",
			d:    makeDeployment().replicaFailure(`pods "x" is forbidden: something else`).obj(),
			want: ReasonFailedCreate + `: pods cannot be created: pods "x" is forbidden: something else`,
		},
		{
			name: "the conditions of an earlier spec are no news",
			d:    makeDeployment().replicaFailure(quotaMsg).deadline().stale().obj(),
		},
		{
			name:   "claim without a storage class",
			d:      makeDeployment().obj(),
			claims: []claimState{noClass},
			want:   "ClaimPending: claim shop-web-data is not bound: it names no storage class and the cluster has no default StorageClass",
		},
		{
			name:   "claim without a storage class, as the PV controller says it",
			d:      makeDeployment().obj(),
			claims: []claimState{claim("", ptr.To(""), claimEvent("Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set"))},
			want:   "ClaimPending: claim shop-web-data is not bound: no persistent volumes available for this claim and no storage class is set",
		},
		{
			name:   "claim of a missing StorageClass",
			d:      makeDeployment().obj(),
			claims: []claimState{claim(corev1.ClaimPending, ptr.To("fast"), claimEvent("Warning", "ProvisioningFailed", `storageclass.storage.k8s.io "fast" not found`))},
			want:   `ClaimPending: claim shop-web-data is not bound: storageclass.storage.k8s.io "fast" not found`,
		},
		{
			name:   "claim being provisioned",
			d:      makeDeployment().obj(),
			claims: []claimState{claim(corev1.ClaimPending, ptr.To("fast"), nil)},
			want:   `ClaimPending: claim shop-web-data is not bound: waiting for a volume of StorageClass "fast"`,
		},
		{
			name:   "claim lost",
			d:      makeDeployment().obj(),
			claims: []claimState{claim(corev1.ClaimLost, ptr.To("fast"), nil)},
			want:   "ClaimLost: claim shop-web-data lost its volume pv-1",
		},
		{
			name:   "claim waiting for its first consumer is no cause while the pod is scheduled",
			d:      makeDeployment().obj(),
			pods:   []*corev1.Pod{makePod("p").waiting("ContainerCreating", "").obj()},
			claims: []claimState{claim(corev1.ClaimPending, ptr.To("local"), claimEvent("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding"))},
		},
		{
			name:   "claim waiting for its first consumer, which no node takes",
			d:      makeDeployment().obj(),
			pods:   []*corev1.Pod{makePod("p").unschedulable("0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.").obj()},
			claims: []claimState{claim(corev1.ClaimPending, ptr.To("local"), claimEvent("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding"))},
			want: "Unschedulable: pod p cannot be scheduled: 0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.; " +
				"claim shop-web-data is not bound: waiting for first consumer to be created before binding",
		},
		{
			name: "rollout stalled names the cause below",
			d:    makeDeployment().deadline().obj(),
			pods: []*corev1.Pod{makePod("p").waiting("ErrImagePull", pullMsg).obj()},
			want: `ProgressDeadlineExceeded: rollout stalled: ReplicaSet "shop-web-5d9c7" has timed out progressing.; pod p cannot pull the image of container web: ` + pullMsg,
		},
		{
			name: "rollout stalled with nothing else known",
			d:    makeDeployment().deadline().obj(),
			want: `ProgressDeadlineExceeded: rollout stalled: ReplicaSet "shop-web-5d9c7" has timed out progressing.`,
		},

		// Priority, when several apply: the root first.
		{
			name:   "pods that cannot be created before claims",
			d:      makeDeployment().replicaFailure(quotaMsg).obj(),
			claims: []claimState{noClass},
			want:   refusal.ReasonQuotaExceeded + ": pods cannot be created: " + quotaMsg,
		},
		{
			name:   "an unbound claim before the pod it keeps from being scheduled",
			d:      makeDeployment().obj(),
			pods:   []*corev1.Pod{makePod("p").unschedulable(`0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.`).obj()},
			claims: []claimState{noClass},
			want:   "ClaimPending: claim shop-web-data is not bound: it names no storage class and the cluster has no default StorageClass",
		},
		{
			name: "unschedulable before container causes, whatever the pod order",
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{
				makePod("a").crashed(3, 1, "Error", "", backOff).obj(),
				makePod("b").waiting("ErrImagePull", pullMsg).obj(),
				makePod("c").unschedulable(schedMsg).obj(),
			},
			want: "Unschedulable: pod c cannot be scheduled: " + schedMsg,
		},
		{
			name: "invalid image, image pull, configuration, start, crash loop",
			d:    makeDeployment().obj(),
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
			d:    makeDeployment().obj(),
			pods: []*corev1.Pod{makePod("p").crashed(3, 1, "Error", "", backOff).
				container(corev1.ContainerStatus{Name: "sidecar", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: "CreateContainerConfigError", Message: `secret "s" not found`}}}).obj()},
			want: `ContainerConfigError: pod p cannot configure container sidecar: secret "s" not found`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := serviceRollout{Service: "web", Deployment: tt.d, Pods: tt.pods, Claims: tt.claims}
			got := ""
			if b := serviceBlocked(in); b != nil {
				assert.Equal(t, "web", b.Service)
				got = b.Reason + ": " + b.Message
			}
			assert.Equal(t, tt.want, got)

			// The cache holds trimmed pods: they must decide the same.
			trimmed := make([]*corev1.Pod, len(tt.pods))
			for i, p := range tt.pods {
				o, err := trimPod(p.DeepCopy())
				require.NoError(t, err)
				trimmed[i] = o.(*corev1.Pod)
				assert.Equal(t, podcause.OfPod(p), podcause.OfPod(trimmed[i]), "pod %s trimmed", p.Name)
			}
			in.Pods = trimmed
			again := ""
			if b := serviceBlocked(in); b != nil {
				again = b.Reason + ": " + b.Message
			}
			assert.Equal(t, got, again, "from trimmed pods")
		})
	}
}

func TestBoundedMessages(t *testing.T) {
	long := strings.Repeat("0/5000 nodes are available: é ", 200)
	b := serviceBlocked(serviceRollout{Service: "web", Deployment: makeDeployment().obj(),
		Pods: []*corev1.Pod{makePod("p").unschedulable(long).obj()}})
	require.NotNil(t, b)
	prefix := "pod p cannot be scheduled: "
	assert.LessOrEqual(t, len(b.Message), len(prefix)+maxCauseMessage+len("…"))
	assert.True(t, strings.HasSuffix(b.Message, "…"))
	assert.True(t, strings.HasPrefix(b.Message, prefix+"0/5000 nodes are available"))
	assert.True(t, strings.ToValidUTF8(b.Message, "?") == b.Message, "cut on a character boundary")
}

func TestBlockedSummary(t *testing.T) {
	pull := blocked{Service: "web", cause: cause{Rank: podcause.RankImagePull, Reason: ReasonImagePullFailed, Message: "pod a cannot pull"}}
	claimed := blocked{Service: "db", cause: cause{Rank: rankClaim, Reason: ReasonClaimPending, Message: "claim d is not bound"}}
	stalled := blocked{Service: "api", cause: cause{Rank: rankDeadline, Reason: ReasonProgressDeadlineExceeded, Message: "rollout stalled"}}

	reason, msg, isStalled := blockedSummary([]blocked{pull, claimed})
	assert.Equal(t, ReasonClaimPending, reason, "the lowest-ranked service gives the reason")
	assert.Equal(t, "service web: pod a cannot pull; service db: claim d is not bound", msg, "services in template order")
	assert.False(t, isStalled)

	reason, msg, isStalled = blockedSummary([]blocked{pull, stalled})
	assert.Equal(t, ReasonProgressDeadlineExceeded, reason)
	assert.Equal(t, "service web: pod a cannot pull; service api: rollout stalled", msg)
	assert.True(t, isStalled)

	var many []blocked
	for i := range 20 {
		many = append(many, blocked{Service: fmt.Sprintf("s%d", i), cause: cause{Rank: podcause.RankCrashLoop, Reason: ReasonCrashLooping,
			Message: strings.Repeat("x", maxCauseMessage)}})
	}
	_, msg, _ = blockedSummary(many)
	assert.LessOrEqual(t, len(msg), maxBlockedMessage+64)
	assert.Regexp(t, `; 1[0-9] more services blocked$`, msg)
	assert.True(t, strings.HasPrefix(msg, "service s0: xxx"))
}
