//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/workflows"
)

// attack is one write by one identity and what the cluster answers: denied
// is a part of the refusal (the policy's message, or RBAC's), empty for a
// control that shows the honest path still works.
type attack struct {
	name   string
	do     func(ctx context.Context) error
	denied string
}

// TestTenancyAttacks plays the attack suite of the tenancy issue on the
// local cluster, with the packaged policies and RBAC and the three managers
// running: every kind with a userId, written from bound, unmarked, backend
// and default namespaces, by a tenant, a wildcard namespace admin, an
// approver, a backend and its colleague, a namespace creator and the
// managers' own ServiceAccounts. Each refusal names the field; the controls
// are admitted, and the honest task and workflow then run to success.
func TestTenancyAttacks(t *testing.T) {
	c := requireCluster(t)
	w := newTenancyWorld(t, c)
	g := newAttackGround(t, w)
	attacks := append(append(append(g.spoofing(t), g.steps(t)...), g.approvals(t)...), g.marks(t)...)
	n := 0
	for _, a := range attacks {
		if a.denied != "" {
			n++
		}
	}
	require.GreaterOrEqual(t, n, 40, "the issue asks for at least 40 attacks")
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			err := a.do(t.Context())
			if a.denied == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "refused: %v", err)
			assert.Contains(t, err.Error(), a.denied)
		})
	}
	t.Run("the honest task and the approved workflow succeed", func(t *testing.T) {
		cs := scheduler(t, c)
		require.Eventually(t, func() bool {
			at, err := cs.SchedulerV1alpha1().AgentTasks(w.alice).Get(t.Context(), "own-at", metav1.GetOptions{})
			return err == nil && at.Status.Phase == v1alpha1.TaskSucceeded
		}, timeout, tick, "alice's own task never succeeded")
		require.Eventually(t, func() bool {
			wf, err := cs.SchedulerV1alpha1().Workflows(w.alice).Get(t.Context(), g.named, metav1.GetOptions{})
			return err == nil && wf.Status.Phase == v1alpha1.WorkflowSucceeded
		}, timeout, tick, "the workflow the approver approved never succeeded")
	})
	t.Run("nothing of the refused objects exists", func(t *testing.T) {
		cs := scheduler(t, c)
		for _, ns := range []string{w.team, "default"} {
			ats, err := cs.SchedulerV1alpha1().AgentTasks(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, ats.Items, "AgentTasks in %s", ns)
			wfs, err := cs.SchedulerV1alpha1().Workflows(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, wfs.Items, "Workflows in %s", ns)
			uds, err := cs.SchedulerV1alpha1().UserDeployments(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, uds.Items, "UserDeployments in %s", ns)
			jobs, err := c.Clientset.BatchV1().Jobs(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, jobs.Items, "Jobs in %s", ns)
		}
		for _, ns := range []string{w.alice, w.listed} {
			ats, err := cs.SchedulerV1alpha1().AgentTasks(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			for _, at := range ats.Items {
				assert.Equal(t, w.alice, at.Spec.UserID, "every AgentTask in %s is alice's: %s", ns, at.Name)
			}
		}
		bob, err := c.Clientset.CoreV1().Namespaces().Get(t.Context(), w.bob, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Nil(t, bob.DeletionTimestamp, "bob's namespace is untouched")
		assert.Equal(t, w.bob, bob.Labels[labelkeys.Tenant])
		alice, err := c.Clientset.CoreV1().Namespaces().Get(t.Context(), w.alice, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, w.alice, alice.Labels[labelkeys.Tenant], "alice's binding is unchanged")
		assert.NotContains(t, alice.Labels, labelkeys.Backend)
	})
}

// attackGround holds the objects the attacks aim at, made honestly first.
type attackGround struct {
	w     *tenancyWorld
	named string // alice's workflow whose gate names the approver
	// gates of alice's workflows: naming only bob, naming nobody.
	others, open string
	// workflows the backend submitted for alice in the backend namespace:
	// one waiting at its gate, one Failed (only those may be retried).
	backendRun, failedRun string
}

func newAttackGround(t *testing.T, w *tenancyWorld) *attackGround {
	t.Helper()
	g := &attackGround{w: w, named: "named", others: "others", open: "open", backendRun: "for-alice", failedRun: "failed-for-alice"}
	asTenant := w.as(t, w.tenant)
	for name, approvers := range map[string]*v1alpha1.Approvers{
		g.named:  {Users: []string{w.approver}, Groups: []string{w.reviewers}},
		g.others: {Users: []string{w.bob}},
		g.open:   nil,
	} {
		_, err := asTenant.SchedulerV1alpha1().Workflows(w.alice).Create(t.Context(), gatedWorkflow(w.alice, name, w.alice, approvers), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err := w.as(t, w.backer).SchedulerV1alpha1().Workflows(w.backend).Create(t.Context(),
		gatedWorkflow(w.backend, g.backendRun, w.alice, nil), metav1.CreateOptions{})
	require.NoError(t, err)
	failing := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: w.backend, Name: g.failedRun},
		Spec: v1alpha1.WorkflowSpec{UserID: w.alice, Steps: []v1alpha1.WorkflowStep{
			{Name: "fail", Image: "agent:e2e", Input: v1alpha1.TaskInput{"KWOK_EXIT_CODE": "3"}}}}}
	_, err = w.as(t, w.backer).SchedulerV1alpha1().Workflows(w.backend).Create(t.Context(), failing, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		wf, err := scheduler(t, w.c).SchedulerV1alpha1().Workflows(w.backend).Get(t.Context(), g.failedRun, metav1.GetOptions{})
		return err == nil && wf.Status.Phase == v1alpha1.WorkflowFailed
	}, timeout, tick, "the failing workflow never failed")
	return g
}

// gatedWorkflow waits for approval, then runs one agent that succeeds.
func gatedWorkflow(namespace, name, userID string, approvers *v1alpha1.Approvers) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.WorkflowSpec{UserID: userID, Steps: []v1alpha1.WorkflowStep{
			{Name: "review", Approval: &v1alpha1.ApprovalGate{Message: "ship it?", Approvers: approvers}},
			{Name: "ship", Image: "agent:e2e", Input: v1alpha1.TaskInput{"KWOK_TERMINATION_MESSAGE": `{"shipped":"yes"}`}},
		}}}
}

func tenantTask(namespace, name, userID string) *v1alpha1.AgentTask {
	return &v1alpha1.AgentTask{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.AgentTaskSpec{TaskID: name, UserID: userID, Image: "agent:e2e",
			Input: v1alpha1.TaskInput{"KWOK_TERMINATION_MESSAGE": `{"done":"yes"}`}}}
}

func userDeployment(namespace, name, userID string) *v1alpha1.UserDeployment {
	return &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.UserDeploymentSpec{UserID: userID, Image: "ghcr.io/opsnorth/hello:2.0.1", ContainerPort: new(int32(8080))}}
}

// kinds writes one object of each kind with a userId through cs in
// namespace, named prefix-ud, prefix-at and prefix-wf.
func kinds(cs versioned.Interface, namespace, prefix, userID string, dryRun bool) []func(context.Context) error {
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return []func(context.Context) error{
		func(ctx context.Context) error {
			_, err := cs.SchedulerV1alpha1().UserDeployments(namespace).Create(ctx, userDeployment(namespace, prefix+"-ud", userID), opts)
			return err
		},
		func(ctx context.Context) error {
			_, err := cs.SchedulerV1alpha1().AgentTasks(namespace).Create(ctx, tenantTask(namespace, prefix+"-at", userID), opts)
			return err
		},
		func(ctx context.Context) error {
			_, err := cs.SchedulerV1alpha1().Workflows(namespace).Create(ctx, gatedWorkflow(namespace, prefix+"-wf", userID, nil), opts)
			return err
		},
	}
}

var kindNames = []string{"UserDeployment", "AgentTask", "Workflow"}

// spoofing: another user's userId, and namespaces that serve nobody.
func (g *attackGround) spoofing(t *testing.T) []attack {
	w := g.w
	bound := func(userID, ns string) string {
		return `spec.userId: "` + userID + `" is not "` + ns + `", the user namespace ` + ns + ` is bound to`
	}
	notServed := func(ns string) string {
		return "spec.userId: namespace " + ns + " is neither bound to a user (label scheduler.opsnorth.io/tenant=<userId>)" +
			" nor a backend namespace (label scheduler.opsnorth.io/backend=true)"
	}
	var out []attack
	add := func(who, what string, writes []func(context.Context) error, denied string) {
		for i, do := range writes {
			out = append(out, attack{name: who + ": " + kindNames[i] + " " + what, do: do, denied: denied})
		}
	}
	tenant, nsAdmin, backer := w.as(t, w.tenant), w.as(t, w.nsAdmin), w.as(t, w.backer)
	add("tenant", "as bob in alice's namespace", kinds(tenant, w.alice, "spoof", w.bob, false), bound(w.bob, w.alice))
	add("namespace admin", "as bob in alice's namespace", kinds(nsAdmin, w.alice, "admin-spoof", w.bob, false), bound(w.bob, w.alice))
	add("namespace admin", "in an unmarked namespace", kinds(nsAdmin, w.team, "unserved", w.alice, false), notServed(w.team))
	add("cluster admin", "in default", kinds(scheduler(t, w.c), "default", "unserved", w.alice, false), notServed("default"))
	add("backend", "for a user its namespace does not list", kinds(backer, w.listed, "unlisted", w.bob, false),
		`spec.userId: "`+w.bob+`" is not among the users backend namespace `+w.listed+` may act for (annotation scheduler.opsnorth.io/backend-users)`)
	add("tenant", "in bob's namespace", kinds(tenant, w.bob, "trespass", w.bob, false), `is forbidden: User "`+w.tenant+`" cannot create resource`)
	// The honest AgentTask runs to success (checked at the end).
	add("tenant", "of their own (control)", kinds(tenant, w.alice, "own", w.alice, false), "")
	add("backend", "for a listed user (control)", kinds(backer, w.listed, "listed", w.alice, true), "")
	add("backend", "for any user in a full-trust namespace (control)", kinds(backer, w.backend, "any", w.bob, true), "")
	out = append(out, attack{name: "tenant: change their UserDeployment's userId to bob", do: func(ctx context.Context) error {
		cs := w.as(t, w.tenant)
		ud, err := cs.SchedulerV1alpha1().UserDeployments(w.alice).Get(ctx, "own-ud", metav1.GetOptions{})
		if err != nil {
			return err
		}
		ud.Spec.UserID = w.bob
		_, err = cs.SchedulerV1alpha1().UserDeployments(w.alice).Update(ctx, ud, metav1.UpdateOptions{})
		return err
	}, denied: "spec.userId"})
	return out
}

// steps: forged and squatted step tasks, by a tenant, the backend and the
// workflows manager outside the namespaces it serves.
func (g *attackGround) steps(t *testing.T) []attack {
	w := g.w
	forged := "metadata: only the workflows manager may create an AgentTask owned by a Workflow or labelled scheduler.opsnorth.io/workflow"
	create := func(who, ns string, at *v1alpha1.AgentTask) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := w.as(t, who).SchedulerV1alpha1().AgentTasks(ns).Create(ctx, at, metav1.CreateOptions{})
			return err
		}
	}
	owned := func(at *v1alpha1.AgentTask) *v1alpha1.AgentTask {
		at.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Workflow", Name: g.named,
			UID: "0f6d3c1e-0000-4000-8000-000000000001"}}
		return at
	}
	labelled := func(at *v1alpha1.AgentTask) *v1alpha1.AgentTask {
		at.Labels = map[string]string{labelkeys.Workflow: g.named}
		return at
	}
	squat := workflows.TaskName(g.named, "ship", 0)
	stepForm := "metadata.name: " + squat + " has the form of a workflow step task"
	workflowsSA := "system:serviceaccount:" + localcluster.ManagerNamespace + ":opsnorth-scheduler-workflows"
	return []attack{
		{"tenant: a step task owned by their own workflow", create(w.tenant, w.alice, owned(tenantTask(w.alice, "forged-owner", w.alice))), forged},
		{"tenant: a step task labelled with a workflow", create(w.tenant, w.alice, labelled(tenantTask(w.alice, "forged-label", w.alice))), forged},
		{"tenant: squat the next step's task name", create(w.tenant, w.alice, tenantTask(w.alice, squat, w.alice)), stepForm},
		{"backend: a step task owned by a workflow", create(w.backer, w.backend, owned(tenantTask(w.backend, "forged-owner", w.alice))), forged},
		{"backend: squat a step task's name", create(w.backer, w.backend, tenantTask(w.backend, workflows.TaskName(g.backendRun, "ship", 0), w.alice)),
			"has the form of a workflow step task"},
		// Refused by both the tenant binding and the workflows manager's
		// fence, whichever the API server asks first: both name the namespace.
		{"workflows manager: a step task in an unmarked namespace", create(workflowsSA, w.team, owned(tenantTask(w.team, "step", w.alice))),
			w.team + " is neither"},
		{"tenant: a task named like a release (control)", create(w.tenant, w.alice, tenantTask(w.alice, "build-v2-1", w.alice)), ""},
	}
}
