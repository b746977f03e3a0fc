package agents_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/testkit"
)

// within is how soon the Ready condition must name a pod's cause after the
// kubelet reported it: only the pod watch brings it (the Deployment's
// status does not change), and a reconcile may trail on a loaded machine.
const within = 15 * time.Second

// TestAgentReportsPodCauses plays the ReplicaSet controller and the kubelet
// (envtest runs neither) for an Agent whose image cannot be pulled: its
// Ready condition names the pull failure within seconds, in phase
// Progressing; the kubelet's alternating pull states cost no write; a crash
// loop is named with its exit code; and the Agent is Ready once its pod is.
func TestAgentReportsPodCauses(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	mgr := startManager(t, ns)
	const name = "puller"
	require.NoError(t, c.Create(t.Context(), testkit.MakeAgent(name, ns).Obj()))
	setDeploymentStatus(t, c, ns, name, noneReady, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing,
		Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"})
	waitPhase(t, c, ns, name, ossav1.AgentProgressing, agents.ReasonProgressing)
	pod := createPod(t, c, getDeployment(t, c, ns, name), "aaaaa")

	const pullMsg = `failed to pull and unpack image "ghcr.io/acme/agent:1": failed to resolve reference: dial tcp: lookup ghcr.io: no such host`
	t.Run("an image that cannot be pulled is named", func(t *testing.T) {
		setPodStatus(t, c, pod, waitingOn("ErrImagePull", pullMsg))
		got, took := waitReady(t, c, ns, name, podcause.ReasonImagePullFailed)
		t.Logf("ImagePullFailed after %s", took.Round(time.Millisecond))
		assert.Equal(t, ossav1.AgentProgressing, got.Status.Phase)
		ready := meta.FindStatusCondition(got.Status.Conditions, "Ready")
		require.NotNil(t, ready)
		assert.Equal(t, metav1.ConditionFalse, ready.Status)
		assert.Equal(t, "0/1 replicas ready; pod "+pod.Name+" cannot pull the image of container agent: "+pullMsg, ready.Message)
		assert.Contains(t, condition(got, "Reconciling"), "True/ImagePullFailed")
		assert.Empty(t, condition(got, "Stalled"))
	})

	t.Run("the kubelet's back-off is no news", func(t *testing.T) {
		mgr.Requests.Reset()
		setPodStatus(t, c, pod, waitingOn("ImagePullBackOff", `Back-off pulling image "ghcr.io/acme/agent:1": ErrImagePull: `+pullMsg))
		assert.Never(t, func() bool { return len(mgr.Requests.Writes()) > 0 }, settle, 100*time.Millisecond,
			"the same cause costs no write")
		assert.Empty(t, mgr.Requests.Writes())
	})

	t.Run("a crash loop is named with its exit", func(t *testing.T) {
		setPodStatus(t, c, pod, func(st *corev1.PodStatus) {
			st.Phase = corev1.PodRunning
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: "x", RestartCount: 3,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
					Message: "back-off 40s restarting failed container=agent"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 2, Reason: "Error", Message: "no OSSA_AGENT_TOKEN", StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}}}
		})
		got, _ := waitReady(t, c, ns, name, podcause.ReasonCrashLooping)
		assert.Equal(t, ossav1.AgentProgressing, got.Status.Phase)
		assert.Contains(t, condition(got, "Ready"), "container agent is crash looping, last exit code 2 (Error): no OSSA_AGENT_TOKEN")
	})

	t.Run("ready once the pod is", func(t *testing.T) {
		setPodStatus(t, c, pod, func(st *corev1.PodStatus) {
			st.Phase = corev1.PodRunning
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: "x", Ready: true, Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
		})
		markReady(t, c, ns, name)
		got := waitPhase(t, c, ns, name, ossav1.AgentReady, agents.ReasonReady)
		assert.Equal(t, "True/Ready: 1/1 replicas ready", condition(got, "Ready"))
	})
}

// createPod creates a pod of the Agent's Deployment, as its ReplicaSet would.
func createPod(t *testing.T, c client.Client, d *appsv1.Deployment, suffix string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-5d9c7-" + suffix, Namespace: d.Namespace,
			Labels: d.Spec.Template.Labels, Annotations: d.Spec.Template.Annotations},
		Spec: *d.Spec.Template.Spec.DeepCopy(),
	}
	require.NoError(t, c.Create(t.Context(), pod))
	return pod
}

// setPodStatus writes the pod's status as the scheduler and kubelet would:
// scheduled, then whatever set makes of it.
func setPodStatus(t *testing.T, c client.Client, pod *corev1.Pod, set func(*corev1.PodStatus)) {
	t.Helper()
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(pod), pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
	set(&pod.Status)
	require.NoError(t, c.Status().Update(t.Context(), pod))
}

// waitingOn: the agent container waits with reason and msg.
func waitingOn(reason, msg string) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: "x",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
	}
}

// waitReady waits, at most within, until the Agent's Ready condition has
// reason for its current generation, and returns the Agent and how long
// that took.
func waitReady(t *testing.T, c client.Client, ns, name, reason string) (*ossav1.Agent, time.Duration) {
	t.Helper()
	start := time.Now()
	var last ossav1.Agent
	if !assert.Eventually(t, func() bool {
		if c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &last) != nil {
			return false
		}
		r := meta.FindStatusCondition(last.Status.Conditions, "Ready")
		return r != nil && r.Reason == reason && r.ObservedGeneration == last.Generation
	}, within, 20*time.Millisecond, "Ready reason %s", reason) {
		t.Fatalf("last: phase %s, Ready %s", last.Status.Phase, condition(&last, "Ready"))
	}
	return &last, time.Since(start)
}
