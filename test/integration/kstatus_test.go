package integration

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

// phaseCase is one phase of one kind: how to get an object there, and what
// kstatus-aware tools and kubectl wait then see. The README's table of what
// each tool sees is this table.
type phaseCase struct {
	kind, phase string
	// drive creates the object and returns once its status shows the phase
	// for its current generation.
	drive func(t *testing.T, s *stage) objRef
	// kstatus is cli-utils' status.Compute of the object.
	kstatus status.Status
	// met are the conditions `kubectl wait --for=condition=X` matches: True
	// and observed at the object's generation. Of waitConditions, the others
	// must not match.
	met []string
}

// phaseCases are every kind's, in the README's order.
var phaseCases = slices.Concat(taskCases, workflowCases, appCases, agentCases, unreconciledCases)

// waitConditions are the conditions whose match every case checks.
var waitConditions = []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled,
	v1alpha1.ConditionComplete, v1alpha1.ConditionFailed, workflows.ConditionSuspended}

const (
	ready       = v1alpha1.ConditionReady
	reconciling = v1alpha1.ConditionReconciling
	stalled     = v1alpha1.ConditionStalled
	complete    = v1alpha1.ConditionComplete
	failed      = v1alpha1.ConditionFailed
)

// TestWhatToolsSee drives every kind into every phase with its manager on
// the API server and checks what kstatus (Flux health checks, cli-utils,
// kpt live status) and kubectl wait make of it.
func TestWhatToolsSee(t *testing.T) {
	s := newStage(t)
	for _, tc := range phaseCases {
		t.Run(tc.kind+"/"+tc.phase, func(t *testing.T) {
			t.Parallel()
			ref := tc.drive(t, s)
			u := s.get(t, ref)
			res, err := status.Compute(u)
			if assert.NoError(t, err) {
				assert.Equal(t, tc.kstatus, res.Status, "kstatus: %s", res.Message)
			}
			for _, c := range conditionsOf(t, u) {
				assert.Equal(t, u.GetGeneration(), c.ObservedGeneration, "observedGeneration of condition %s", c.Type)
			}
			for _, c := range waitConditions {
				assert.Equal(t, slices.Contains(tc.met, c), s.waitMet(t, ref, "condition="+c),
					"kubectl wait --for=condition=%s; conditions: %+v", c, conditionsOf(t, u))
			}
			if tc.kind == kindAgentTask || tc.kind == kindWorkflow {
				// The README's wait for either end.
				ended := slices.Contains(tc.met, complete) || slices.Contains(tc.met, failed)
				assert.Equal(t, ended, s.waitMet(t, ref, "jsonpath={.status.completionTime}"), "completionTime set once it ended")
			}
		})
	}
}

// unreconciledCases are objects no manager has written a status for yet
// (in a namespace none watches): kstatus has nothing to go on and says
// Current; kubectl wait matches nothing.
var unreconciledCases = []phaseCase{
	{kind: "AgentTask", phase: "not yet reconciled", drive: idle(kindAgentTask), kstatus: status.CurrentStatus},
	{kind: "Workflow", phase: "not yet reconciled", drive: idle(kindWorkflow), kstatus: status.CurrentStatus},
	{kind: "UserDeployment", phase: "not yet reconciled", drive: idle(kindUserDeployment), kstatus: status.CurrentStatus},
	{kind: "Agent", phase: "not yet reconciled", drive: idle(kindAgent), kstatus: status.CurrentStatus},
	// No manager writes a template's status: it is Current as soon as it exists.
	{kind: "DeploymentTemplate", phase: "any", drive: idle(kindDeploymentTemplate), kstatus: status.CurrentStatus},
}

// idle creates an object of kind in the namespace no manager watches.
func idle(kind string) func(t *testing.T, s *stage) objRef {
	return func(t *testing.T, s *stage) objRef {
		name := uniqueName("idle")
		var obj client.Object
		switch kind {
		case kindAgentTask:
			obj = testkit.MakeAgentTask(name, s.idle).Obj()
		case kindWorkflow:
			obj = testkit.MakeWorkflow(name, s.idle).Step(testkit.MakeStep("a")).Obj()
		case kindUserDeployment:
			obj = rawApp(s.idle, name)
		case kindAgent:
			obj = testkit.MakeAgent(name, s.idle).Obj()
		case kindDeploymentTemplate:
			obj = validDeploymentTemplate(name)
		}
		s.create(t, obj)
		return objRef{kind: kind, namespace: obj.GetNamespace(), name: name}
	}
}
