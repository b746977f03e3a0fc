package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

// appCases drive UserDeployments, the test playing the Deployment
// controller (stage.markReady).
var appCases = []phaseCase{
	{kind: kindUserDeployment, phase: "pending (dependsOn)", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef {
			return s.createApp(t, v1alpha1.PhasePending, func(ud *v1alpha1.UserDeployment) { ud.Spec.DependsOn = []string{"missing"} })
		}},
	{kind: kindUserDeployment, phase: "provisioning", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef { return s.createApp(t, v1alpha1.PhaseProvisioning, nil) }},
	{kind: kindUserDeployment, phase: "ready", kstatus: status.CurrentStatus, met: []string{ready},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createApp(t, v1alpha1.PhaseProvisioning, nil)
			s.markReady(t, "user-"+ref.name, client.MatchingLabels{labelkeys.UserDeployment: render.KeyLabel(ref.namespace + "." + ref.name)})
			return s.waitPhase(t, ref, string(v1alpha1.PhaseReady), nil)
		}},
	{kind: kindUserDeployment, phase: "stopped", kstatus: status.CurrentStatus, met: []string{ready},
		drive: func(t *testing.T, s *stage) objRef {
			return s.createApp(t, v1alpha1.PhaseStopped, func(ud *v1alpha1.UserDeployment) { ud.Spec.DesiredState = v1alpha1.DesiredStopped })
		}},
	{kind: kindUserDeployment, phase: "error (stalled: template not found)", kstatus: status.FailedStatus, met: []string{stalled},
		drive: func(t *testing.T, s *stage) objRef {
			return s.createApp(t, v1alpha1.PhaseError, func(ud *v1alpha1.UserDeployment) {
				ud.Spec.Image, ud.Spec.ContainerPort, ud.Spec.Template = "", nil, uniqueName("missing")
			})
		}},
	{kind: kindUserDeployment, phase: "deleted (desiredState)", kstatus: status.CurrentStatus, met: []string{ready},
		drive: func(t *testing.T, s *stage) objRef {
			return s.createApp(t, v1alpha1.PhaseDeleted, func(ud *v1alpha1.UserDeployment) { ud.Spec.DesiredState = v1alpha1.DesiredDeleted })
		}},
}

// agentCases drive ossa.ai Agents the same way.
var agentCases = []phaseCase{
	{kind: kindAgent, phase: "Waiting (dependencies)", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef {
			return s.createAgent(t, ossav1.AgentWaiting, func(a *testkit.AgentWrapper) { a.Requires("missing", "1.0.0", "") })
		}},
	{kind: kindAgent, phase: "Progressing", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef { return s.createAgent(t, ossav1.AgentProgressing, nil) }},
	{kind: kindAgent, phase: "Ready", kstatus: status.CurrentStatus, met: []string{ready},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createAgent(t, ossav1.AgentProgressing, nil)
			s.markReady(t, ref.namespace, client.MatchingLabels{labelkeys.Agent: ref.name})
			return s.waitPhase(t, ref, string(ossav1.AgentReady), nil)
		}},
	{kind: kindAgent, phase: "Stalled (unsupported runtime)", kstatus: status.FailedStatus, met: []string{stalled},
		drive: func(t *testing.T, s *stage) objRef {
			return s.createAgent(t, ossav1.AgentStalled, func(a *testkit.AgentWrapper) { a.Runtime(ossav1.RuntimeEdge) })
		}},
}

// rawApp is a one-image UserDeployment whose user is its name.
func rawApp(namespace, name string) *v1alpha1.UserDeployment {
	ud := testkit.MakeUserDeployment(name, namespace, name).Image("ghcr.io/opsnorth/hello:2").Obj()
	ud.Spec.ContainerPort = ptr.To[int32](8080)
	return ud
}

// createApp creates a raw-image app (mutated), its own user's, and waits for phase.
func (s *stage) createApp(t *testing.T, phase v1alpha1.DeploymentPhase, mutate func(*v1alpha1.UserDeployment)) objRef {
	t.Helper()
	ud := rawApp(s.apps, uniqueName("app"))
	if mutate != nil {
		mutate(ud)
	}
	s.create(t, ud)
	return s.waitPhase(t, objRef{kind: kindUserDeployment, namespace: ud.Namespace, name: ud.Name}, string(phase), nil)
}

// createAgent creates an Agent (mutated) and waits for phase.
func (s *stage) createAgent(t *testing.T, phase ossav1.AgentPhase, mutate func(*testkit.AgentWrapper)) objRef {
	t.Helper()
	a := testkit.MakeAgent(uniqueName("agent"), s.agents)
	if mutate != nil {
		mutate(a)
	}
	obj := a.Obj()
	s.create(t, obj)
	return s.waitPhase(t, objRef{kind: kindAgent, namespace: obj.Namespace, name: obj.Name}, string(phase), nil)
}

// markReady plays the Deployment controller: every Deployment selected in
// namespace reports all its replicas ready.
func (s *stage) markReady(t *testing.T, namespace string, sel client.MatchingLabels) {
	t.Helper()
	require.Eventually(t, func() bool {
		var list appsv1.DeploymentList
		if err := s.c.List(context.Background(), &list, client.InNamespace(namespace), sel); err != nil || len(list.Items) == 0 {
			return false
		}
		for i := range list.Items {
			d := &list.Items[i]
			n := ptr.Deref(d.Spec.Replicas, 1)
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
			if s.c.Status().Update(context.Background(), d) != nil {
				return false
			}
		}
		return true
	}, stageWait, 200*time.Millisecond, "Deployments of %v in %s", sel, namespace)
}
