package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

// stageWait bounds each wait for a phase: the machine is shared and loaded.
const stageWait = 90 * time.Second

// stage is the three managers on the test API server, each watching its own
// namespaces, plus one namespace none of them watches.
type stage struct {
	c  client.Client
	dc dynamic.Interface
	// tasks, workflows, apps (UserDeployments), agents and idle are the
	// namespaces of the cases; idle is watched by no manager.
	tasks, workflows, apps, agents, idle string
	kubectl                              *kubectlWait
}

// objRef names an object of one of the suite's kinds.
type objRef struct{ kind, namespace, name string }

func newStage(t *testing.T) *stage {
	t.Helper()
	env := testenv.Require(t)
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, schedulerv1alpha1.AddToScheme(scheme))
	require.NoError(t, ossav1.AddToScheme(scheme))
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	s := &stage{c: c, dc: newDynamicClient(t, env.Config), kubectl: newKubectlWait(t, env)}
	for _, ns := range []*string{&s.tasks, &s.workflows, &s.apps, &s.agents, &s.idle} {
		*ns = uniqueName("kstatus")
		ensureNamespace(t, env.Config, *ns)
	}
	// The Workflows' step tasks are played by the test (stage.finishStep), so
	// the tasks manager stays out of their namespace.
	testkit.StartManager(t, env.Config, tasks.NewComponent(), "--task-namespace="+s.tasks)
	testkit.StartManager(t, env.Config, workflows.NewComponent(), "--workflow-namespace="+s.workflows)
	testkit.StartManager(t, env.Config, deployments.NewComponent(), "--deployment-domain=apps.example.com",
		"--watch-namespace="+s.apps+","+s.agents)
	return s
}

// create creates obj, failing the test on an error.
func (s *stage) create(t *testing.T, obj client.Object) {
	t.Helper()
	require.NoError(t, s.c.Create(t.Context(), obj), "create %s", obj.GetName())
}

// get reads the object as the tools do: unstructured, from the API server.
func (s *stage) get(t *testing.T, ref objRef) *unstructured.Unstructured {
	t.Helper()
	r := schedulerResources[ref.kind]
	rc := dynamic.ResourceInterface(s.dc.Resource(r.gvr))
	if r.namespaced {
		rc = s.dc.Resource(r.gvr).Namespace(ref.namespace)
	}
	u, err := rc.Get(context.Background(), ref.name, metav1.GetOptions{})
	require.NoError(t, err, "get %s %s/%s", ref.kind, ref.namespace, ref.name)
	return u
}

// waitPhase waits until the object's status.phase is phase for its current
// generation and done (when given) holds, and returns ref.
func (s *stage) waitPhase(t *testing.T, ref objRef, phase string, done func(*unstructured.Unstructured) bool) objRef {
	t.Helper()
	var last *unstructured.Unstructured
	require.Eventually(t, func() bool {
		last = s.get(t, ref)
		got, _, _ := unstructured.NestedString(last.Object, "status", "phase")
		observed, _, _ := unstructured.NestedInt64(last.Object, "status", "observedGeneration")
		return got == phase && observed == last.GetGeneration() && (done == nil || done(last))
	}, stageWait, 100*time.Millisecond, "%s %s/%s never reached phase %s; last status: %v", ref.kind, ref.namespace, ref.name, phase, last)
	return ref
}

// waitMet reports whether `kubectl wait --for=<forArg>` matches the object now.
func (s *stage) waitMet(t *testing.T, ref objRef, forArg string) bool {
	t.Helper()
	return s.kubectl.met(t, ref, forArg)
}

// conditionsOf returns the object's status.conditions.
func conditionsOf(t *testing.T, u *unstructured.Unstructured) []metav1.Condition {
	t.Helper()
	var st struct {
		Status struct {
			Conditions []metav1.Condition `json:"conditions"`
		} `json:"status"`
	}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &st))
	return st.Status.Conditions
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
