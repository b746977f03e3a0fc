package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
)

// The refusals of the fences, in part.
const (
	systemNS  = " is a Kubernetes system namespace"
	unmarked  = " has none of these marks and the object no Agent owner"
	neither   = " is neither"
	ownNSOnly = ": in its own namespace opsnorth-system it writes only Leases"
)

// fenceWrite is one server dry run by a manager's ServiceAccount; denied is
// a part of the refusal, empty for a control that is admitted.
type fenceWrite struct {
	name   string
	do     func(ctx context.Context) error
	denied string
}

// fenceWorld is where the fences are probed: a namespace the deployments
// manager created, one bound to a user, a backend and an unmarked one, and
// the objects of the managers' own kinds they update or delete there.
type fenceWorld struct {
	created, bound, backend, team string
	agent                         *ossav1.Agent
	ud                            *schedulerv1alpha1.UserDeployment
	task, step                    *schedulerv1alpha1.AgentTask
	wf                            *schedulerv1alpha1.Workflow
}

// managerFenceAttacks attacks each manager's fence (applied by the caller
// with the rest) as that manager's ServiceAccount, given system:masters so
// that the policy alone decides: writes in the system namespaces, in the
// managers' own namespace and in unmarked namespaces are refused, naming the
// namespace; each manager's real writes are admitted.
func managerFenceAttacks(t *testing.T, env *testenv.Env, suffix string) {
	admin := fenceClient(t, env, "")
	w := &fenceWorld{bound: "fence-bound-" + suffix, backend: "fence-backend-" + suffix, team: "fence-team-" + suffix}
	for name, labels := range map[string]map[string]string{w.bound: {labelkeys.Tenant: "alice"},
		w.backend: {labelkeys.Backend: labelkeys.BackendValue}, w.team: nil, managerNS: nil} {
		err := admin.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
		if !apierrors.IsAlreadyExists(err) || name != managerNS {
			require.NoError(t, err, "namespace %s", name)
		}
	}
	asDeployments := fenceClient(t, env, deploymentsSA)
	created := userNamespace("fence-user-" + suffix)
	require.NoError(t, asDeployments.Create(t.Context(), created), "the deployments manager creates a user namespace")
	w.created = created.Name

	w.agent = validAgent(w.team, "fence-agent")
	w.ud = withUser(validImageUserDeployment(w.backend, "fence-ud"), "bob")
	w.task, w.wf = validAgentTask(w.backend, "fence-task"), validWorkflow(w.backend, "fence-wf")
	for _, obj := range []client.Object{w.agent, w.ud, w.task, w.wf} {
		require.NoError(t, admin.Create(t.Context(), obj), "create %s", obj.GetName())
	}
	asWorkflows := fenceClient(t, env, workflowsSA)
	w.step = validAgentTask(w.backend, "fence-step")
	w.step.Labels = map[string]string{labelkeys.Workflow: w.wf.Name}
	require.NoError(t, asWorkflows.Create(t.Context(), w.step), "the workflows manager creates a step task")

	t.Run("deployments", func(t *testing.T) { runFenceWrites(t, deploymentsFence(w, asDeployments)) })
	t.Run("tasks", func(t *testing.T) { runFenceWrites(t, tasksFence(w, fenceClient(t, env, tasksSA))) })
	t.Run("workflows", func(t *testing.T) { runFenceWrites(t, workflowsFence(w, asWorkflows)) })
}

func deploymentsFence(w *fenceWorld, c client.Client) []fenceWrite {
	var out []fenceWrite
	for _, ns := range []string{"kube-system", "kube-public", managerNS, w.team} {
		denied := map[string]string{"kube-system": "kube-system" + systemNS, "kube-public": "kube-public" + systemNS,
			managerNS: ownNSOnly, w.team: "namespace " + w.team + unmarked}[ns]
		out = append(out,
			fenceWrite{"a Deployment in " + ns, dryCreate(c, fenceDeployment(ns, nil)), denied},
			fenceWrite{"a Service in " + ns, dryCreate(c, fenceService(ns)), denied})
	}
	for _, ns := range []string{w.created, w.bound, w.backend} {
		out = append(out,
			fenceWrite{"a Deployment in " + ns + " (control)", dryCreate(c, fenceDeployment(ns, nil)), ""},
			fenceWrite{"a Service in " + ns + " (control)", dryCreate(c, fenceService(ns)), ""})
	}
	nsNamed := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	label := `{"metadata":{"labels":{"example.com/touched":"yes"}}}`
	createdBy := `{"metadata":{"annotations":{"scheduler.opsnorth.io/created-by":"opsnorth-scheduler-deployments"}}}`
	return append(out,
		fenceWrite{"an Agent's Deployment in kube-system", dryCreate(c, fenceDeployment("kube-system", w.agent)), "kube-system" + systemNS},
		fenceWrite{"label kube-system", dryPatch(c, nsNamed("kube-system"), label), "Namespace kube-system: kube-system" + systemNS},
		fenceWrite{"label its own namespace", dryPatch(c, nsNamed(managerNS), label), ownNSOnly},
		fenceWrite{"label an unmarked namespace", dryPatch(c, nsNamed(w.team), label),
			"the deployments manager may update only namespaces it created (annotation scheduler.opsnorth.io/created-by)"},
		fenceWrite{"mark a bound namespace as created by it", dryPatch(c, nsNamed(w.bound), createdBy),
			"the deployments manager may not mark namespace " + w.bound + " as created by it"},
		fenceWrite{"a namespace without its mark", dryCreate(c, nsNamed("fence-plain-"+w.team)),
			"the deployments manager may create a namespace only with its annotation scheduler.opsnorth.io/created-by"},
		// Namespace lifecycle admission refuses this first; the fence would too.
		fenceWrite{"delete kube-system", dryDelete(c, nsNamed("kube-system")), `namespaces "kube-system" is forbidden`},
		fenceWrite{"delete an unmarked namespace", dryDelete(c, nsNamed(w.team)), w.team + " is not one"},
		fenceWrite{"delete a bound namespace", dryDelete(c, nsNamed(w.bound)),
			"the deployments manager may delete only namespaces it created (annotation scheduler.opsnorth.io/created-by); " + w.bound + " is not one"},
		fenceWrite{"a ClusterRole", dryCreate(c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fence-" + w.team}}),
			"of the cluster-scoped objects it writes only Namespaces"},
		fenceWrite{"an Agent's Deployment in an unmarked namespace (control)", dryCreate(c, fenceDeployment(w.team, w.agent)), ""},
		fenceWrite{"an Event about an Agent in an unmarked namespace (control)", dryCreate(c, fenceEvent(w.team, "opsnorth-scheduler-deployments",
			corev1.ObjectReference{APIVersion: "ossa.ai/v1", Kind: "Agent", Namespace: w.team, Name: w.agent.Name, UID: w.agent.UID})), ""},
		fenceWrite{"an Agent's status in an unmarked namespace (control)", dryPatchStatus(c, w.agent, `{"status":{"readyReplicas":1}}`), ""},
		fenceWrite{"a UserDeployment's status (control)", dryPatchStatus(c, w.ud, `{"status":{"readyReplicas":1}}`), ""},
		fenceWrite{"label the namespace it created (control)", dryPatch(c, nsNamed(w.created), label), ""},
		fenceWrite{"label a bound namespace (control)", dryPatch(c, nsNamed(w.bound), label), ""},
		fenceWrite{"a user namespace (control)", dryCreate(c, userNamespace("fence-new-"+w.team)), ""},
		fenceWrite{"delete the namespace it created (control)", dryDelete(c, nsNamed(w.created)), ""},
	)
}

func tasksFence(w *fenceWorld, c client.Client) []fenceWrite {
	var out []fenceWrite
	for ns, denied := range map[string]string{"kube-system": "kube-system" + systemNS, "kube-public": "kube-public" + systemNS,
		managerNS: ownNSOnly, w.team: "the tasks manager may create Job " + w.team + "/fence only in a namespace bound to a user" +
			" (label scheduler.opsnorth.io/tenant) or a backend namespace (label scheduler.opsnorth.io/backend=true); " + w.team + neither} {
		out = append(out, fenceWrite{"a Job in " + ns, dryCreate(c, fenceJob(ns)), denied})
	}
	taskRef := corev1.ObjectReference{APIVersion: "scheduler.opsnorth.io/v1alpha1", Kind: "AgentTask", Namespace: w.backend, Name: w.task.Name, UID: w.task.UID}
	return append(append(out, managerNamespaceWrites(c, "opsnorth-scheduler-tasks")...),
		fenceWrite{"a Secret in its own namespace", dryCreate(c, fenceSecret(managerNS, "fence")), ownNSOnly},
		fenceWrite{"a ConfigMap in an unmarked namespace", dryCreate(c, fenceConfigMap(w.team)), w.team + neither},
		fenceWrite{"label a namespace", dryPatch(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.backend}}, `{"metadata":{"labels":{"x":"y"}}}`),
			"the tasks manager may not update Namespace " + w.backend + ": it writes no cluster-scoped object"},
		fenceWrite{"a Job in a bound namespace (control)", dryCreate(c, fenceJob(w.bound)), ""},
		fenceWrite{"a Job in a backend namespace (control)", dryCreate(c, fenceJob(w.backend)), ""},
		fenceWrite{"an Event about an AgentTask (control)", dryCreate(c, fenceEvent(w.backend, "opsnorth-scheduler-tasks", taskRef)), ""},
		fenceWrite{"an AgentTask's status (control)", dryPatchStatus(c, w.task, `{"status":{"jobName":"fence"}}`), ""},
		fenceWrite{"delete an AgentTask (control)", dryDelete(c, w.task), ""},
	)
}

func workflowsFence(w *fenceWorld, c client.Client) []fenceWrite {
	wfRef := corev1.ObjectReference{APIVersion: "scheduler.opsnorth.io/v1alpha1", Kind: "Workflow", Namespace: w.backend, Name: w.wf.Name, UID: w.wf.UID}
	// The tenant binding refuses these AgentTasks too; either refusal names the namespace.
	return append(managerNamespaceWrites(c, "opsnorth-scheduler-workflows"),
		fenceWrite{"an AgentTask in kube-system", dryCreate(c, validAgentTask("kube-system", "fence")), "kube-system"},
		fenceWrite{"an AgentTask in its own namespace", dryCreate(c, validAgentTask(managerNS, "fence")), managerNS},
		fenceWrite{"an AgentTask in an unmarked namespace", dryCreate(c, validAgentTask(w.team, "fence")), w.team + neither},
		fenceWrite{"a ConfigMap in kube-public", dryCreate(c, fenceConfigMap("kube-public")), "kube-public" + systemNS},
		fenceWrite{"a ConfigMap in an unmarked namespace", dryCreate(c, fenceConfigMap(w.team)),
			"the workflows manager may create ConfigMap " + w.team + "/fence only in a namespace bound to a user"},
		fenceWrite{"another Secret in its own namespace", dryCreate(c, fenceSecret(managerNS, "fence")), ownNSOnly},
		fenceWrite{"its step key in an unmarked namespace", dryCreate(c, fenceSecret(w.team, "opsnorth-scheduler-workflows-step-key")), w.team + neither},
		fenceWrite{"delete an AgentTask that is no step task", dryDelete(c, w.task),
			"the workflows manager may delete only the step tasks it created (label scheduler.opsnorth.io/workflow); " + w.task.Name + " is not one"},
		fenceWrite{"its step key in its own namespace (control)", dryCreate(c, fenceSecret(managerNS, "opsnorth-scheduler-workflows-step-key")), ""},
		fenceWrite{"an AgentTask in a backend namespace (control)", dryCreate(c, validAgentTask(w.backend, "fence")), ""},
		fenceWrite{"an Event about a Workflow (control)", dryCreate(c, fenceEvent(w.backend, "opsnorth-scheduler-workflows", wfRef)), ""},
		fenceWrite{"a Workflow's status (control)", dryPatchStatus(c, w.wf, `{"status":{"currentStep":1}}`), ""},
		fenceWrite{"delete a step task (control)", dryDelete(c, w.step), ""},
		fenceWrite{"delete a Workflow (control)", dryDelete(c, w.wf), ""},
	)
}

// managerNamespaceWrites are a manager's leader election writes in its own
// namespace, admitted.
func managerNamespaceWrites(c client.Client, manager string) []fenceWrite {
	return []fenceWrite{
		{"a Lease in its own namespace (control)", dryCreate(c, fenceLease(managerNS)), ""},
		{"an Event in its own namespace (control)", dryCreate(c, fenceEvent(managerNS, manager,
			corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: managerNS, Name: "fence"})), ""},
	}
}

func runFenceWrites(t *testing.T, writes []fenceWrite) {
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			err := w.do(t.Context())
			if w.denied == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "refused: %v", err)
			assert.Contains(t, err.Error(), w.denied)
		})
	}
}
