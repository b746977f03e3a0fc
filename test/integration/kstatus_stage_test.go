package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/labelkeys"
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
	s := &stage{dc: newDynamicClient(t, env.Config), kubectl: newKubectlWait(t, env)}
	for _, ns := range []*string{&s.tasks, &s.workflows, &s.apps, &s.agents, &s.idle} {
		*ns = uniqueName("kstatus")
		ensureNamespace(t, env.Config, *ns)
	}
	// Cleanups run last first: this one once the managers stopped.
	t.Cleanup(func() { s.removeLeftovers(t) })
	// The Workflows' step tasks are played by the test (stage.finishStep), so
	// the tasks manager stays out of their namespace.
	testkit.StartManager(t, env.Config, tasks.NewComponent(), "--task-namespace="+s.tasks)
	testkit.StartManager(t, env.Config, workflows.NewComponent(), "--workflow-namespace="+s.workflows)
	testkit.StartManager(t, env.Config, deployments.NewComponent(), "--deployment-domain=apps.example.com",
		"--watch-namespace="+s.apps+","+s.agents)
	// After the managers: their start sets controller-runtime's logger.
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, schedulerv1alpha1.AddToScheme(scheme))
	require.NoError(t, ossav1.AddToScheme(scheme))
	var err error
	s.c, err = client.New(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	return s
}

// removeLeftovers deletes what the managers made in their own namespace:
// the workflows manager's step key, which other tests of this package
// create themselves, and the host claims of the test's apps.
func (s *stage) removeLeftovers(t *testing.T) {
	if s.c == nil {
		return // the managers did not start
	}
	ctx := context.Background()
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testkit.ManagerNamespace, Name: workflows.StepKeySecret}}
	require.NoError(t, client.IgnoreNotFound(s.c.Delete(ctx, key)))
	var claims coordinationv1.LeaseList
	require.NoError(t, s.c.List(ctx, &claims, client.InNamespace(testkit.ManagerNamespace),
		client.MatchingLabels{labelkeys.HostClaim: labelkeys.HostClaimValue}))
	for i := range claims.Items {
		if strings.HasPrefix(ptr.Deref(claims.Items[i].Spec.HolderIdentity, ""), s.apps+"/") {
			require.NoError(t, client.IgnoreNotFound(s.c.Delete(ctx, &claims.Items[i])))
		}
	}
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
