package agents_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestMain(m *testing.M) { testenv.RunMain(m) }

const wait = 60 * time.Second

// settle is how long a test watches for something that must not happen
// (a write, a child) after the manager had its chance to do it.
const settle = 5 * time.Second

// startManager runs the deployments manager in-process as its binary runs,
// with only its generated RBAC, reconciling the Agents of namespace.
func startManager(t *testing.T, namespace string) *testkit.Manager {
	t.Helper()
	cfg := testkit.ManagerConfig(t, testenv.Require(t), "deployments")
	args := []string{"--deployment-domain=apps.example.com", "--watch-namespace=" + namespace}
	if level := os.Getenv("AGENTS_TEST_LOG_LEVEL"); level != "" {
		args = append(args, "--zap-log-level="+level)
	}
	return testkit.StartManager(t, cfg, deployments.NewComponent(), args...)
}

// newClient returns an admin client that knows Agents.
func newClient(t *testing.T) client.Client {
	t.Helper()
	env := testenv.Require(t)
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, ossav1.AddToScheme(scheme))
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	return c
}

func newNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	return newTierNamespace(t, c, "")
}

// newTierNamespace creates a namespace labelled max-tier=tier (none when "",
// so the manager's --default-max-tier, free, applies).
func newTierNamespace(t *testing.T, c client.Client, tier string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "agents-" + rand.String(6)}}
	if tier != "" {
		ns.Labels = map[string]string{labelkeys.MaxTier: tier}
	}
	require.NoError(t, c.Create(t.Context(), ns))
	return ns.Name
}

func getAgent(t *testing.T, c client.Client, ns, name string) *ossav1.Agent {
	t.Helper()
	var a ossav1.Agent
	require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &a))
	return &a
}

// updateAgent applies change to the live Agent, again on a conflict: the
// controller writes its status meanwhile.
func updateAgent(t *testing.T, c client.Client, ns, name string, change func(*ossav1.Agent)) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a := getAgent(t, c, ns, name)
		change(a)
		return c.Update(t.Context(), a)
	}))
}

// waitAgent waits until the Agent's status is about its current
// generation and done holds for it.
func waitAgent(t *testing.T, c client.Client, ns, name string, done func(*ossav1.Agent) bool, what string) *ossav1.Agent {
	t.Helper()
	var last ossav1.Agent
	require.Eventually(t, func() bool {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &last); err != nil {
			return false
		}
		return last.Status.ObservedGeneration == last.Generation && done(&last)
	}, wait, 100*time.Millisecond, "Agent %s/%s: %s; last status: %+v", ns, name, what, &last.Status)
	return &last
}

// waitPhase waits for phase, with reason on the Ready condition when given.
func waitPhase(t *testing.T, c client.Client, ns, name string, phase ossav1.AgentPhase, reason string) *ossav1.Agent {
	t.Helper()
	return waitAgent(t, c, ns, name, func(a *ossav1.Agent) bool {
		r := meta.FindStatusCondition(a.Status.Conditions, "Ready")
		return a.Status.Phase == phase && (reason == "" || r != nil && r.Reason == reason)
	}, fmt.Sprintf("phase %s %s", phase, reason))
}

// condition is "<status>/<reason>: <message>" of a condition, "" when absent.
func condition(a *ossav1.Agent, t string) string {
	c := meta.FindStatusCondition(a.Status.Conditions, t)
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

// setDeploymentStatus plays the Deployment controller for the Agent's
// Deployment: ready of its replicas ready, with conds.
func setDeploymentStatus(t *testing.T, c client.Client, ns, name string, ready func(want int32) int32, conds ...appsv1.DeploymentCondition) {
	t.Helper()
	require.Eventually(t, func() bool {
		var d appsv1.Deployment
		if c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &d) != nil {
			return false
		}
		n := ptrValue(d.Spec.Replicas, 1)
		r := ready(n)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
			ReadyReplicas: r, AvailableReplicas: r, Conditions: conds}
		return c.Status().Update(t.Context(), &d) == nil
	}, wait, 100*time.Millisecond, "status of Deployment %s/%s", ns, name)
}

func allReady(n int32) int32 { return n }
func noneReady(int32) int32  { return 0 }

// markReady makes every replica of the Agent's Deployment ready.
func markReady(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	setDeploymentStatus(t, c, ns, name, allReady)
}

func ptrValue(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func getDeployment(t *testing.T, c client.Client, ns, name string) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	require.Eventually(t, func() bool {
		return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &d) == nil
	}, wait, 100*time.Millisecond, "Deployment %s/%s", ns, name)
	return &d
}

// childKinds are the kinds an Agent may have children of.
var childKinds = agents.Kinds

// children lists "Kind/name" of the objects labelled as the Agent's.
func children(t *testing.T, c client.Client, ns, name string) []string {
	t.Helper()
	var out []string
	for _, gvk := range childKinds {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		require.NoError(t, c.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{labelkeys.Agent: name}))
		for _, o := range list.Items {
			if o.GetDeletionTimestamp() == nil {
				out = append(out, gvk.Kind+"/"+o.GetName())
			}
		}
	}
	return out
}

func getU(t *testing.T, c client.Client, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	require.Eventually(t, func() bool {
		return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u) == nil
	}, wait, 100*time.Millisecond, "%s %s/%s", gvk.Kind, ns, name)
	return u
}

// assertNoDeployment checks, for settle, that the Agent gets no Deployment.
func assertNoDeployment(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	assert.Never(t, func() bool {
		return !apierrors.IsNotFound(c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{}))
	}, settle, 200*time.Millisecond, "Agent %s/%s must not get a Deployment", ns, name)
}

// waitEvent waits for an Event of the deployments manager about the Agent
// with reason and a note containing text, and returns the note.
func waitEvent(t *testing.T, c client.Client, ns, name, reason, text string) string {
	t.Helper()
	var note string
	require.Eventually(t, func() bool {
		var evs eventsv1.EventList
		if c.List(t.Context(), &evs, client.InNamespace(ns)) != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Regarding.Kind == "Agent" && e.Regarding.Name == name && e.Reason == reason &&
				strings.Contains(e.Note, text) && e.ReportingController == "opsnorth-scheduler-deployments" {
				note = e.Note
				return true
			}
		}
		return false
	}, wait, 200*time.Millisecond, "event %s about Agent %s/%s naming %q", reason, ns, name, text)
	return note
}

// reconciles is controller-runtime's count of agent reconciles.
func reconciles(t *testing.T) float64 {
	return testkit.ByLabel(t, "controller_runtime_reconcile_total", "controller")["agent"]
}

// assertNoWrites waits until at least one more reconcile ran and the queue
// settled, then checks the manager wrote nothing.
func assertNoWrites(t *testing.T, mgr *testkit.Manager, before float64) {
	t.Helper()
	require.Eventually(t, func() bool { return reconciles(t) > before }, wait, 100*time.Millisecond)
	assert.Never(t, func() bool { return len(mgr.Requests.Writes()) > 0 }, settle, 100*time.Millisecond,
		"a converged Agent costs no writes")
	assert.Empty(t, mgr.Requests.Writes(), "a converged Agent costs no writes")
}
