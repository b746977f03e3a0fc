package deployments_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// within is how soon the status must name a cause, or its end, after the
// cluster reported it: only a watch brings it (no requeue would), and a
// reconcile may trail a few seconds on the loaded machine.
const within = 15 * time.Second

// rollout plays the scheduler, kubelet and controllers (envtest runs none)
// for one UserDeployment's service.
type rollout struct {
	t       *testing.T
	c       client.Client
	ns      string // of the UserDeployment
	name    string
	userNS  string
	service string
}

// deployment returns the service's Deployment once the manager created it.
func (r *rollout) deployment() *appsv1.Deployment {
	r.t.Helper()
	var d appsv1.Deployment
	require.Eventually(r.t, func() bool {
		return r.c.Get(context.Background(), client.ObjectKey{Namespace: r.userNS, Name: r.name + "-" + r.service}, &d) == nil
	}, wait, 50*time.Millisecond, "Deployment of %s", r.name)
	return &d
}

// createPod creates a pod of the service's Deployment, as its ReplicaSet would.
func (r *rollout) createPod(suffix string) *corev1.Pod {
	r.t.Helper()
	d := r.deployment()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-5d9c7-" + suffix, Namespace: r.userNS,
			Labels: d.Spec.Template.Labels, Annotations: d.Spec.Template.Annotations},
		Spec: *d.Spec.Template.Spec.DeepCopy(),
	}
	require.NoError(r.t, r.c.Create(context.Background(), pod))
	return pod
}

// setPod writes the pod's status as the scheduler or kubelet would.
func (r *rollout) setPod(pod *corev1.Pod, set func(*corev1.PodStatus)) {
	r.t.Helper()
	require.NoError(r.t, r.c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	set(&pod.Status)
	require.NoError(r.t, r.c.Status().Update(context.Background(), pod))
}

// setDeployment writes the Deployment's status as its controller would,
// for its current generation.
func (r *rollout) setDeployment(set func(*appsv1.DeploymentStatus)) {
	r.t.Helper()
	require.Eventually(r.t, func() bool {
		d := r.deployment()
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1}
		set(&d.Status)
		return r.c.Status().Update(context.Background(), d) == nil
	}, wait, 50*time.Millisecond)
}

// claim returns the service's volume claim once the manager created it.
func (r *rollout) claim() *corev1.PersistentVolumeClaim {
	r.t.Helper()
	var pvc corev1.PersistentVolumeClaim
	require.Eventually(r.t, func() bool {
		return r.c.Get(context.Background(), client.ObjectKey{Namespace: r.userNS, Name: r.name + "-" + r.service + "-data"}, &pvc) == nil
	}, wait, 50*time.Millisecond, "claim of %s", r.name)
	return &pvc
}

// claimEvent records the PV controller's event about the claim.
func (r *rollout) claimEvent(typ, reason, msg string) {
	r.t.Helper()
	pvc := r.claim()
	now := metav1.Now()
	require.NoError(r.t, r.c.Create(context.Background(), &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: pvc.Name + "." + reason, Namespace: pvc.Namespace},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace,
			Name: pvc.Name, UID: pvc.UID},
		Type: typ, Reason: reason, Message: msg, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "persistentvolume-controller"},
	}))
}

// bindClaim marks the claim bound, as the PV controller does.
func (r *rollout) bindClaim() {
	r.t.Helper()
	pvc := r.claim()
	pvc.Status.Phase = corev1.ClaimBound
	require.NoError(r.t, r.c.Status().Update(context.Background(), pvc))
}

// waitStatus waits until the Ready condition has reason and msg (exact, or
// "" for any) and the phase is phase, and returns the time that took.
func (r *rollout) waitStatus(phase v1alpha1.DeploymentPhase, reason, msg string) (*v1alpha1.UserDeployment, time.Duration) {
	r.t.Helper()
	start := time.Now()
	var last v1alpha1.UserDeployment
	ok := assert.Eventually(r.t, func() bool {
		if r.c.Get(context.Background(), client.ObjectKey{Namespace: r.ns, Name: r.name}, &last) != nil {
			return false
		}
		c := meta.FindStatusCondition(last.Status.Conditions, v1alpha1.ConditionReady)
		return last.Status.Phase == phase && c != nil && c.Reason == reason && (msg == "" || c.Message == msg) &&
			c.ObservedGeneration == last.Generation
	}, within, 20*time.Millisecond, "want %s %s %q", phase, reason, msg)
	if !ok {
		r.t.Fatalf("last status: phase %s, Ready %s", last.Status.Phase, condition(&last, v1alpha1.ConditionReady))
	}
	return &last, time.Since(start)
}

func running(ready bool) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.Phase = corev1.PodRunning
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "x", Ready: ready, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	}
}

func waiting(reason, msg string) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "x",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
	}
}

func crashLooping(restarts, exitCode int32) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.Phase = corev1.PodRunning
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "x", RestartCount: restarts,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: "back-off 40s restarting failed container=app"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: "Error", Message: "listen tcp :8080: bind: permission denied",
				StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}}}
	}
}

func unschedulablePod(msg string) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: msg, LastTransitionTime: metav1.Now()}}
	}
}

func replicaFailure(msg string) func(*appsv1.DeploymentStatus) {
	return func(st *appsv1.DeploymentStatus) {
		st.Replicas, st.UpdatedReplicas, st.UnavailableReplicas = 0, 0, 0
		st.Conditions = []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"},
			{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: msg},
		}
	}
}

func progressing(st *appsv1.DeploymentStatus) {
	st.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"}}
}

func availableStatus(st *appsv1.DeploymentStatus) {
	st.ReadyReplicas, st.AvailableReplicas, st.UnavailableReplicas = 1, 1, 0
	st.Conditions = []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
	}
}

// storageTemplate is a one-service app "db" whose claim names class (nil: none).
func storageTemplate(name string, class *string) *v1alpha1.DeploymentTemplate {
	return &v1alpha1.DeploymentTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.DeploymentTemplateSpec{Services: []v1alpha1.TemplateService{{
			Name: "db", Image: "ghcr.io/opsnorth/db:1",
			Storage: &v1alpha1.Storage{Size: resource.MustParse("1Gi"), MountPath: "/var/lib/db", StorageClassName: class},
		}}},
	}
}

const (
	schedulerMessage = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	pullError        = `rpc error: code = NotFound desc = failed to pull and unpack image "ghcr.io/opsnorth/hello:2": failed to resolve reference "ghcr.io/opsnorth/hello:2": ghcr.io/opsnorth/hello:2: not found`
	quotaMessage     = `pods "c-app-5d9c7-x2x8k" is forbidden: exceeded quota: opsnorth-tier, requested: pods=1, used: pods=50, limited: pods=50`
	podSecurity      = `pods "c-app-5d9c7-x2x8k" is forbidden: violates PodSecurity "restricted:latest": seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	deadlineMessage  = `ReplicaSet "c-app-5d9c7" has timed out progressing.`
)

// TestRolloutBlocked: a UserDeployment whose pods cannot start names, within
// seconds of the cluster reporting it, what blocks each service, and goes
// back to provisioning or ready without anyone touching it when the cause
// goes. Every cause is written as the component that reports it would
// (scheduler, kubelet, ReplicaSet and Deployment controllers, PV
// controller).
func TestRolloutBlocked(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)
	user := userID("blocked")
	userNS := "user-" + user

	type step struct {
		do               func(r *rollout)
		phase            v1alpha1.DeploymentPhase
		reason, message  string // message: the Ready condition's, exact
		stalledCondition bool
	}
	tests := []struct {
		name string
		// template, when set, makes a one-service app "db" with storage of
		// this class ("" for none); else a raw image, service "app".
		template *string
		cause    step
		// cleared takes the cause away; the status must follow unaided.
		cleared step
	}{
		{
			name: "unschedulable",
			cause: step{do: func(r *rollout) { r.setPod(r.createPod("aaaaa"), unschedulablePod(schedulerMessage)) },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonUnschedulable,
				message: "0 replicas ready; service app: pod {app}-app-5d9c7-aaaaa cannot be scheduled: " + schedulerMessage},
			cleared: step{do: func(r *rollout) {
				r.setPod(r.pod("aaaaa"), running(true))
				r.setDeployment(availableStatus)
			}, phase: v1alpha1.PhaseReady, reason: deployments.ReasonReady, message: "1 replicas ready"},
		},
		{
			name: "image pull failing",
			cause: step{do: func(r *rollout) {
				r.setPod(r.createPod("aaaaa"), waiting("ImagePullBackOff", `Back-off pulling image "ghcr.io/opsnorth/hello:2": ErrImagePull: `+pullError))
			}, phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonImagePullFailed,
				message: "0 replicas ready; service app: pod {app}-app-5d9c7-aaaaa cannot pull the image of container app: " + pullError},
			// Only the pod's update says it: the Deployment's status stays.
			cleared: step{do: func(r *rollout) { r.setPod(r.pod("aaaaa"), running(false)) },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonProvisioning, message: "0 replicas ready; waiting for the rollout"},
		},
		{
			name: "invalid image name",
			cause: step{do: func(r *rollout) {
				r.setPod(r.createPod("aaaaa"), waiting("InvalidImageName", `Failed to apply default image tag "Bad/Image": couldn't parse image name "Bad/Image": invalid reference format`))
			}, phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonInvalidImage,
				message: `0 replicas ready; service app: pod {app}-app-5d9c7-aaaaa: container app has an invalid image name: Failed to apply default image tag "Bad/Image": couldn't parse image name "Bad/Image": invalid reference format`},
			// The ReplicaSet replaces the pod with one of the fixed template.
			cleared: step{do: func(r *rollout) {
				require.NoError(r.t, r.c.Delete(context.Background(), r.pod("aaaaa")))
			}, phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonProvisioning, message: "0 replicas ready; waiting for the rollout"},
		},
		{
			name: "missing ConfigMap",
			cause: step{do: func(r *rollout) {
				r.setPod(r.createPod("aaaaa"), waiting("CreateContainerConfigError", r.expand(`configmap "{app}-app-env" not found`)))
			}, phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonContainerConfigError,
				message: `0 replicas ready; service app: pod {app}-app-5d9c7-aaaaa cannot configure container app: configmap "{app}-app-env" not found`},
			cleared: step{do: func(r *rollout) {
				r.setPod(r.pod("aaaaa"), running(true))
				r.setDeployment(availableStatus)
			}, phase: v1alpha1.PhaseReady, reason: deployments.ReasonReady, message: "1 replicas ready"},
		},
		{
			name: "crash looping",
			cause: step{do: func(r *rollout) { r.setPod(r.createPod("aaaaa"), crashLooping(3, 1)) },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonCrashLooping,
				message: "0 replicas ready; service app: pod {app}-app-5d9c7-aaaaa: container app is crash looping, last exit code 1 (Error): listen tcp :8080: bind: permission denied"},
			cleared: step{do: func(r *rollout) { r.setPod(r.pod("aaaaa"), running(false)) },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonProvisioning, message: "0 replicas ready; waiting for the rollout"},
		},
		{
			name: "quota exceeded",
			cause: step{do: func(r *rollout) { r.setDeployment(replicaFailure(quotaMessage)) },
				phase: v1alpha1.PhaseProvisioning, reason: "QuotaExceeded",
				message: "0 replicas ready; service app: pods cannot be created: " + quotaMessage},
			cleared: step{do: func(r *rollout) { r.setDeployment(progressing) },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonProvisioning, message: "0 replicas ready; waiting for the rollout"},
		},
		{
			name: "Pod Security",
			cause: step{do: func(r *rollout) { r.setDeployment(replicaFailure(podSecurity)) },
				phase: v1alpha1.PhaseProvisioning, reason: "AdmissionDenied",
				message: "0 replicas ready; service app: pods cannot be created: " + podSecurity},
			cleared: step{do: func(r *rollout) { r.setDeployment(progressing) },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonProvisioning, message: "0 replicas ready; waiting for the rollout"},
		},
		{
			name: "rollout stalled",
			cause: step{do: func(r *rollout) {
				r.setPod(r.createPod("aaaaa"), waiting("ErrImagePull", pullError))
				r.setDeployment(func(st *appsv1.DeploymentStatus) {
					st.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
						Reason: "ProgressDeadlineExceeded", Message: deadlineMessage}}
				})
			}, phase: v1alpha1.PhaseError, reason: deployments.ReasonProgressDeadlineExceeded, stalledCondition: true,
				message: "0 replicas ready; service app: rollout stalled: " + deadlineMessage +
					"; pod {app}-app-5d9c7-aaaaa cannot pull the image of container app: " + pullError},
			cleared: step{do: func(r *rollout) {
				r.setPod(r.pod("aaaaa"), running(true))
				r.setDeployment(availableStatus)
			}, phase: v1alpha1.PhaseReady, reason: deployments.ReasonReady, message: "1 replicas ready"},
		},
		{
			name:     "claim without a storage class",
			template: ptr.To(""),
			cause: step{phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonClaimPending,
				message: "0 replicas ready; service db: claim {app}-db-data is not bound: it names no storage class and the cluster has no default StorageClass"},
			cleared: step{do: func(r *rollout) { r.bindClaim() },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonProvisioning, message: "0 replicas ready; waiting for the rollout"},
		},
		{
			name:     "claim of a missing StorageClass",
			template: ptr.To("fast"),
			cause: step{do: func(r *rollout) {
				r.claimEvent(corev1.EventTypeWarning, "ProvisioningFailed", `storageclass.storage.k8s.io "fast" not found`)
			}, phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonClaimPending,
				message: `0 replicas ready; service db: claim {app}-db-data is not bound: storageclass.storage.k8s.io "fast" not found`},
			cleared: step{do: func(r *rollout) { r.bindClaim() },
				phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonProvisioning, message: "0 replicas ready; waiting for the rollout"},
		},
		{
			name:     "claim waiting for its first consumer, which no node takes",
			template: ptr.To("local"),
			cause: step{do: func(r *rollout) {
				r.claimEvent(corev1.EventTypeNormal, "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
				r.setPod(r.createPod("aaaaa"), unschedulablePod("0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind."))
			}, phase: v1alpha1.PhaseProvisioning, reason: deployments.ReasonUnschedulable,
				message: "0 replicas ready; service db: pod {app}-db-5d9c7-aaaaa cannot be scheduled: 0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.; " +
					"claim {app}-db-data is not bound: waiting for first consumer to be created before binding"},
			cleared: step{do: func(r *rollout) {
				r.bindClaim()
				r.setPod(r.pod("aaaaa"), running(true))
				r.setDeployment(availableStatus)
			}, phase: v1alpha1.PhaseReady, reason: deployments.ReasonReady, message: "1 replicas ready"},
		},
	}
	var took []string
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &rollout{t: t, c: c, ns: ns, name: fmt.Sprintf("c%d", i), userNS: userNS, service: "app"}
			ud := rawUD(ns, r.name, user)
			if tt.template != nil {
				tmpl := storageTemplate(ns+"-"+r.name, ptr.To(*tt.template))
				if *tt.template == "" {
					tmpl.Spec.Services[0].Storage.StorageClassName = nil
				}
				require.NoError(t, c.Create(context.Background(), tmpl))
				ud.Spec = v1alpha1.UserDeploymentSpec{UserID: user, Template: tmpl.Name}
				r.service = "db"
			}
			created := time.Now()
			require.NoError(t, c.Create(context.Background(), ud))
			r.deployment()
			waitPhase(t, c, ns, r.name, v1alpha1.PhaseProvisioning)

			start := time.Now()
			if tt.cause.do != nil {
				tt.cause.do(r)
			} else {
				start = created // the cause is there from the start
			}
			got, _ := r.waitStatus(tt.cause.phase, tt.cause.reason, r.expand(tt.cause.message))
			took = append(took, fmt.Sprintf("%s: cause %s", tt.name, time.Since(start).Round(time.Millisecond)))
			if tt.cause.phase == v1alpha1.PhaseError {
				assert.Equal(t, r.expand(tt.cause.message), got.Status.LastError)
			}
			stalled := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionStalled)
			assert.Equal(t, tt.cause.stalledCondition, stalled != nil && stalled.Status == metav1.ConditionTrue, "Stalled")
			if assert.True(t, meta.IsStatusConditionFalse(got.Status.Conditions, v1alpha1.ConditionReady)) && !tt.cause.stalledCondition {
				assert.True(t, meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionReconciling), "kstatus: in progress")
			}

			start = time.Now()
			tt.cleared.do(r)
			got, _ = r.waitStatus(tt.cleared.phase, tt.cleared.reason, r.expand(tt.cleared.message))
			took = append(took, fmt.Sprintf("%s: recovery %s", tt.name, time.Since(start).Round(time.Millisecond)))
			assert.Empty(t, got.Status.LastError)
			assert.Nil(t, meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionStalled))
		})
	}
	t.Logf("from the cluster's report to the status:\n%s", strings.Join(took, "\n"))

	t.Run("a crash loop's restarts cost no reconcile, a new exit does", func(t *testing.T) {
		r := &rollout{t: t, c: c, ns: ns, name: "loop", userNS: userNS, service: "app"}
		require.NoError(t, c.Create(context.Background(), rawUD(ns, r.name, user)))
		pod := r.createPod("aaaaa")
		r.setPod(pod, crashLooping(3, 1))
		r.waitStatus(v1alpha1.PhaseProvisioning, deployments.ReasonCrashLooping, "")
		quiet(t)

		before := reconciles(t)
		r.setPod(pod, crashLooping(4, 1))
		r.setPod(pod, func(st *corev1.PodStatus) {
			crashLooping(4, 1)(st)
			st.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
		})
		r.setPod(pod, crashLooping(5, 1))
		assert.Never(t, func() bool { return reconciles(t) > before }, settle, 50*time.Millisecond,
			"restarts that end as the last one did are no news")

		r.setPod(pod, crashLooping(6, 137))
		assert.Eventually(t, func() bool { return reconciles(t) > before }, within, 20*time.Millisecond, "a new exit code is news")
		r.waitStatus(v1alpha1.PhaseProvisioning, deployments.ReasonCrashLooping,
			"0 replicas ready; service app: pod loop-app-5d9c7-aaaaa: container app is crash looping, last exit code 137 (Error): listen tcp :8080: bind: permission denied")
	})
}

// quiet waits until no reconcile ran for a second.
func quiet(t *testing.T) {
	t.Helper()
	last, since := reconciles(t), time.Now()
	require.Eventually(t, func() bool {
		if n := reconciles(t); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) > time.Second
	}, wait, 50*time.Millisecond)
}

// expand puts the app's name into a message of the table.
func (r *rollout) expand(msg string) string { return strings.ReplaceAll(msg, "{app}", r.name) }

// pod is the service's pod of suffix, for a write after its creation.
func (r *rollout) pod(suffix string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: r.name + "-" + r.service + "-5d9c7-" + suffix, Namespace: r.userNS}}
}
