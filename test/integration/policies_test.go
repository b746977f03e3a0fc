package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/workflows"
)

// Identities of the policy tests: two tenants who hold RBAC on the
// scheduler kinds in their own bound namespace only, the platform backend,
// and the managers' ServiceAccounts as the packaging names them.
const (
	workflowsSA   = "system:serviceaccount:opsnorth-system:opsnorth-scheduler-workflows"
	deploymentsSA = "system:serviceaccount:opsnorth-system:opsnorth-scheduler-deployments"
	tasksSA       = "system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks"
)

// TestTenantPolicies applies every admission policy of the packaging (the
// shared ones of the cluster unit and each manager's own), as all-in-one
// ships them, to the real API server and attacks them: each refusal names
// the field, and nothing of the victim's is created or deleted.
func TestTenantPolicies(t *testing.T) {
	env := testenv.Require(t)
	applyPolicies(t, env)
	suffix := rand.String(5)
	alice, bob, backend, probe := "alice-"+suffix, "bob-"+suffix, "backend-"+suffix, "probe-"+suffix
	admin := kubernetes.NewForConfigOrDie(env.Config)
	// team holds RBAC on the scheduler kinds in a namespace nobody marked.
	listed, team := "listed-"+suffix, "team-"+suffix
	backendNS := map[string]string{labelkeys.Backend: labelkeys.BackendValue}
	for user, labels := range map[string]map[string]string{alice: {labelkeys.Tenant: "alice"}, bob: {labelkeys.Tenant: "bob"},
		backend: backendNS, probe: {labelkeys.Tenant: "alice"}, listed: backendNS, team: nil} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: user, Labels: labels}}
		if user == listed {
			ns.Annotations = map[string]string{labelkeys.BackendUsers: "carol, alice"}
		}
		_, err := admin.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{})
		require.NoError(t, err)
		grantSchedulerKinds(t, admin, user, user)
	}
	// Probes admitted before the policy took effect land in their own namespace.
	waitPolicyActive(t, env, probe)
	waitPoliciesActive(t, env, probe)
	asAlice := newSchedulerClient(t, impersonate(env.Config, alice))
	asBackend := newSchedulerClient(t, impersonate(env.Config, backend))
	asListed := newSchedulerClient(t, impersonate(env.Config, listed))
	asTeam := newSchedulerClient(t, impersonate(env.Config, team))
	asAdmin := newSchedulerClient(t, env.Config)
	asWorkflows := newSchedulerClient(t, impersonate(env.Config, workflowsSA, "system:masters"))

	bound := func(userID, ns string) string {
		return `spec.userId: "` + userID + `" is not "alice", the user namespace ` + ns + ` is bound to (label scheduler.opsnorth.io/tenant)`
	}
	notServed := func(ns string) string {
		return "spec.userId: namespace " + ns + " is neither bound to a user (label scheduler.opsnorth.io/tenant=<userId>)" +
			" nor a backend namespace (label scheduler.opsnorth.io/backend=true)"
	}
	forged := "metadata: only the workflows manager may create an AgentTask owned by a Workflow or labelled scheduler.opsnorth.io/workflow"
	stepOf := func(at *schedulerv1alpha1.AgentTask) *schedulerv1alpha1.AgentTask {
		at.OwnerReferences = []metav1.OwnerReference{{APIVersion: "scheduler.opsnorth.io/v1alpha1", Kind: "Workflow", Name: "victim", UID: "0f6d3c1e-0000-4000-8000-000000000001"}}
		return at
	}
	for _, tc := range []struct {
		name   string
		create func(ctx context.Context) error
		denied string // empty: admitted
	}{
		{"a tenant's own userId in their bound namespace", func(ctx context.Context) error {
			return create(ctx, asAlice, withUser(validImageUserDeployment(alice, "own"), "alice"))
		}, ""},
		{"userId spoofing: a UserDeployment as bob in alice's namespace", func(ctx context.Context) error {
			return create(ctx, asAlice, withUser(validImageUserDeployment(alice, "spoof-ud"), "bob"))
		}, bound("bob", alice)},
		{"userId spoofing: an AgentTask as bob", func(ctx context.Context) error {
			at := validAgentTask(alice, "spoof-at")
			at.Spec.UserID = "bob"
			_, err := asAlice.SchedulerV1alpha1().AgentTasks(alice).Create(ctx, at, metav1.CreateOptions{})
			return err
		}, bound("bob", alice)},
		{"userId spoofing: a Workflow as bob", func(ctx context.Context) error {
			wf := validWorkflow(alice, "spoof-wf")
			wf.Spec.UserID = "bob"
			_, err := asAlice.SchedulerV1alpha1().Workflows(alice).Create(ctx, wf, metav1.CreateOptions{})
			return err
		}, bound("bob", alice)},
		{"userId spoofing by the backend in a bound namespace", func(ctx context.Context) error {
			return create(ctx, newSchedulerClient(t, env.Config), withUser(validImageUserDeployment(alice, "admin-spoof"), "mallory"))
		}, bound("mallory", alice)},
		{"the backend acts for any user in its backend namespace", func(ctx context.Context) error {
			return create(ctx, asBackend, withUser(validImageUserDeployment(backend, "for-bob"), "bob"))
		}, ""},
		{"a backend namespace acts for a user it lists", func(ctx context.Context) error {
			return create(ctx, asListed, withUser(validImageUserDeployment(listed, "for-alice"), "alice"))
		}, ""},
		{"a backend namespace refuses a user it does not list", func(ctx context.Context) error {
			return create(ctx, asListed, withUser(validImageUserDeployment(listed, "for-bob"), "bob"))
		}, `spec.userId: "bob" is not among the users backend namespace ` + listed + ` may act for (annotation scheduler.opsnorth.io/backend-users)`},
		{"a backend namespace refuses an unlisted AgentTask user", func(ctx context.Context) error {
			at := validAgentTask(listed, "task-for-bob")
			at.Spec.UserID = "bob"
			_, err := asListed.SchedulerV1alpha1().AgentTasks(listed).Create(ctx, at, metav1.CreateOptions{})
			return err
		}, `spec.userId: "bob" is not among the users backend namespace`},
		{"an unmarked namespace serves no UserDeployment", func(ctx context.Context) error {
			return create(ctx, asTeam, withUser(validImageUserDeployment(team, "unserved-ud"), "team"))
		}, notServed(team)},
		{"an unmarked namespace serves no AgentTask", func(ctx context.Context) error {
			_, err := asTeam.SchedulerV1alpha1().AgentTasks(team).Create(ctx, validAgentTask(team, "unserved-at"), metav1.CreateOptions{})
			return err
		}, notServed(team)},
		{"an unmarked namespace serves no Workflow", func(ctx context.Context) error {
			_, err := asTeam.SchedulerV1alpha1().Workflows(team).Create(ctx, validWorkflow(team, "unserved-wf"), metav1.CreateOptions{})
			return err
		}, notServed(team)},
		{"default serves nobody, not even cluster-admin", func(ctx context.Context) error {
			_, err := asAdmin.SchedulerV1alpha1().AgentTasks("default").Create(ctx, validAgentTask("default", "unserved-default"), metav1.CreateOptions{})
			return err
		}, notServed("default")},
		{"the workflows manager cannot create step tasks in an unmarked namespace", func(ctx context.Context) error {
			_, err := asWorkflows.SchedulerV1alpha1().AgentTasks(team).Create(ctx, stepOf(validAgentTask(team, "unserved-step")), metav1.CreateOptions{})
			return err
		}, team + " is neither"}, // the tenant binding's refusal or the workflows fence's
		{"a reserved host name", func(ctx context.Context) error {
			return create(ctx, asAlice, withUser(validImageUserDeployment(alice, "www"), "alice"))
		}, `metadata.name: "www" is a reserved host name (the first label of the app host, kept by the platform); choose another name`},
		{"int, the parent of internal hosts", func(ctx context.Context) error {
			return create(ctx, asBackend, withUser(validImageUserDeployment(backend, "int"), "bob"))
		}, `metadata.name: "int" is a reserved host name`},
		{"a name that only begins like a reserved one", func(ctx context.Context) error {
			return create(ctx, asBackend, withUser(validImageUserDeployment(backend, "www-shop"), "bob"))
		}, ""},
		{"a forged step task (Workflow owner reference)", func(ctx context.Context) error {
			_, err := asAlice.SchedulerV1alpha1().AgentTasks(alice).Create(ctx, stepOf(validAgentTask(alice, "forged-owner")), metav1.CreateOptions{})
			return err
		}, forged},
		{"a forged step task (workflow label)", func(ctx context.Context) error {
			at := validAgentTask(alice, "forged-label")
			at.Labels = map[string]string{labelkeys.Workflow: "victim"}
			_, err := asAlice.SchedulerV1alpha1().AgentTasks(alice).Create(ctx, at, metav1.CreateOptions{})
			return err
		}, forged},
		{"the backend cannot forge a step task either", func(ctx context.Context) error {
			_, err := asBackend.SchedulerV1alpha1().AgentTasks(backend).Create(ctx, stepOf(validAgentTask(backend, "forged-backend")), metav1.CreateOptions{})
			return err
		}, forged},
		{"the workflows manager creates step tasks", func(ctx context.Context) error {
			_, err := asWorkflows.SchedulerV1alpha1().AgentTasks(backend).Create(ctx, stepOf(validAgentTask(backend, "real-step")), metav1.CreateOptions{})
			return err
		}, ""},
		{"squatting a step task's name, with no claim on the workflow", func(ctx context.Context) error {
			_, err := asAlice.SchedulerV1alpha1().AgentTasks(alice).Create(ctx, validAgentTask(alice, workflows.TaskName("victim", "fetch", 0)), metav1.CreateOptions{})
			return err
		}, "metadata.name: " + workflows.TaskName("victim", "fetch", 0) + " has the form of a workflow step task (<workflow>-<step>-<8 hex>-<attempt>), which only the workflows manager may create"},
		{"the backend squats a step task's name", func(ctx context.Context) error {
			_, err := asBackend.SchedulerV1alpha1().AgentTasks(backend).Create(ctx, validAgentTask(backend, workflows.TaskName("victim", "report", 2)), metav1.CreateOptions{})
			return err
		}, "has the form of a workflow step task"},
		{"a task named like a release with a digit suffix", func(ctx context.Context) error {
			_, err := asBackend.SchedulerV1alpha1().AgentTasks(backend).Create(ctx, validAgentTask(backend, "build-v2-1"), metav1.CreateOptions{})
			return err
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.create(t.Context())
			if tc.denied == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "refused: %v", err)
			assert.Contains(t, err.Error(), tc.denied)
		})
	}
	t.Run("nothing of the refused objects exists", func(t *testing.T) {
		cs := newSchedulerClient(t, env.Config)
		uds, err := cs.SchedulerV1alpha1().UserDeployments(alice).List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, uds.Items, 1)
		assert.Equal(t, "own", uds.Items[0].Name)
		ats, err := cs.SchedulerV1alpha1().AgentTasks(alice).List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, ats.Items)
		for _, ns := range []string{team, "default"} {
			ats, err := cs.SchedulerV1alpha1().AgentTasks(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, ats.Items, "no AgentTask in %s", ns)
			wfs, err := cs.SchedulerV1alpha1().Workflows(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, wfs.Items, "no Workflow in %s", ns)
			uds, err := cs.SchedulerV1alpha1().UserDeployments(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, uds.Items, "no UserDeployment in %s", ns)
		}
	})
	t.Run("controls belong to the users a backend namespace still acts for", func(t *testing.T) {
		wf := validWorkflow(listed, "carols")
		wf.Spec.UserID = "carol"
		wf, err := asListed.SchedulerV1alpha1().Workflows(listed).Create(t.Context(), wf, metav1.CreateOptions{})
		require.NoError(t, err)
		ns, err := admin.CoreV1().Namespaces().Get(t.Context(), listed, metav1.GetOptions{})
		require.NoError(t, err)
		ns.Annotations[labelkeys.BackendUsers] = "alice" // carol leaves
		_, err = admin.CoreV1().Namespaces().Update(t.Context(), ns, metav1.UpdateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			ns, err := admin.CoreV1().Namespaces().Get(context.Background(), listed, metav1.GetOptions{})
			if err == nil {
				ns.Annotations[labelkeys.BackendUsers] = "carol, alice"
				_, _ = admin.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{})
			}
		})
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			stop := wf.DeepCopy()
			stop.Spec.Stop = true
			_, err := asListed.SchedulerV1alpha1().Workflows(listed).Update(t.Context(), stop, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			if assert.Error(c, err) {
				assert.Contains(c, err.Error(), `spec.userId: "carol" is not among the users backend namespace `+listed+` may act for`)
			}
		}, 30*time.Second, 200*time.Millisecond, "stopping carol's workflow after carol left the namespace")
		wf.Finalizers = []string{"example.com/hold"}
		_, err = asListed.SchedulerV1alpha1().Workflows(listed).Update(t.Context(), wf, metav1.UpdateOptions{})
		require.NoError(t, err, "an update that keeps the spec passes")
		latest, err := asListed.SchedulerV1alpha1().Workflows(listed).Get(t.Context(), wf.Name, metav1.GetOptions{})
		require.NoError(t, err)
		latest.Finalizers = nil
		_, err = asListed.SchedulerV1alpha1().Workflows(listed).Update(t.Context(), latest, metav1.UpdateOptions{})
		require.NoError(t, err, "finalizers can be removed")
	})
	t.Run("userId cannot be changed to another user's in a bound namespace", func(t *testing.T) {
		ud, err := asAlice.SchedulerV1alpha1().UserDeployments(alice).Get(t.Context(), "own", metav1.GetOptions{})
		require.NoError(t, err)
		ud.Spec.UserID = "bob"
		_, err = asAlice.SchedulerV1alpha1().UserDeployments(alice).Update(t.Context(), ud, metav1.UpdateOptions{})
		require.Error(t, err)
		ud.Labels = map[string]string{"touched": "yes"}
		ud.Spec.UserID = "alice"
		_, err = asAlice.SchedulerV1alpha1().UserDeployments(alice).Update(t.Context(), ud, metav1.UpdateOptions{})
		require.NoError(t, err, "an update that keeps the userId passes (finalizers can be removed)")
	})
	t.Run("approvals are made in their writer's name", func(t *testing.T) {
		wf := validWorkflow(alice, "gated")
		last := &wf.Spec.Steps[len(wf.Spec.Steps)-1]
		*last = schedulerv1alpha1.WorkflowStep{Name: last.Name, DependsOn: last.DependsOn, Approval: &schedulerv1alpha1.ApprovalGate{}}
		wf.Spec.Approvers = &schedulerv1alpha1.Approvers{AllowSelfApproval: true} // alice created it
		_, err := asAlice.SchedulerV1alpha1().Workflows(alice).Create(t.Context(), wf, metav1.CreateOptions{})
		require.NoError(t, err)
		decide := func(by string) error {
			wf, err := asAlice.SchedulerV1alpha1().Workflows(alice).Get(t.Context(), "gated", metav1.GetOptions{})
			require.NoError(t, err)
			wf.Spec.Approvals = append(wf.Spec.Approvals, schedulerv1alpha1.Approval{Step: last.Name, Retry: int32(len(wf.Spec.Approvals)), By: by})
			_, err = asAlice.SchedulerV1alpha1().Workflows(alice).Update(t.Context(), wf, metav1.UpdateOptions{})
			return err
		}
		err = decide("bob")
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "refused: %v", err)
		assert.Contains(t, err.Error(), "spec.approvals[].by: a new approval must be made in the name of its writer, "+alice)
		require.NoError(t, decide(alice))
		require.NoError(t, decide(alice), "alice's earlier approval passes unchanged")
	})
	t.Run("approvers", func(t *testing.T) { approverAttacks(t, env, alice, alice, suffix) })
	t.Run("workflow controls in a backend namespace", func(t *testing.T) { controlAttacks(t, env, backend, backend, suffix) })
	t.Run("namespace marks", func(t *testing.T) { namespaceMarkAttacks(t, env, suffix) })
	t.Run("manager fences", func(t *testing.T) { managerFenceAttacks(t, env, suffix) })
	t.Run("the deployments manager deletes only namespaces it created", func(t *testing.T) {
		asDeployments := kubernetes.NewForConfigOrDie(impersonate(env.Config, deploymentsSA, "system:masters"))
		err := asDeployments.CoreV1().Namespaces().Delete(t.Context(), bob, metav1.DeleteOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the deployments manager may delete only namespaces it created (annotation scheduler.opsnorth.io/created-by); "+bob+" is not one")
		ns, err := admin.CoreV1().Namespaces().Get(t.Context(), bob, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Nil(t, ns.DeletionTimestamp, "bob's namespace is untouched")

		own := "user-" + suffix
		_, err = asDeployments.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: own,
			Annotations: map[string]string{"scheduler.opsnorth.io/created-by": "opsnorth-scheduler-deployments"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.NoError(t, asDeployments.CoreV1().Namespaces().Delete(t.Context(), own, metav1.DeleteOptions{}))
		require.NoError(t, admin.CoreV1().Namespaces().Delete(t.Context(), bob, metav1.DeleteOptions{}), "anyone else's RBAC decides")
	})
	t.Run("the tasks manager creates Jobs only where tasks are served and deletes only its own", func(t *testing.T) {
		asTasks := kubernetes.NewForConfigOrDie(impersonate(env.Config, tasksSA, "system:masters"))
		job := func(ns, name string, labels map[string]string) *batchv1.Job {
			return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
				Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
		}
		agent := map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.Component: "agent"}
		for ns, denied := range map[string]string{"kube-system": "kube-system is a Kubernetes system namespace",
			team: "the tasks manager may create Job " + team + "/escape only in a namespace bound to a user (label scheduler.opsnorth.io/tenant)" +
				" or a backend namespace (label scheduler.opsnorth.io/backend=true); " + team + " is neither"} {
			_, err := asTasks.BatchV1().Jobs(ns).Create(t.Context(), job(ns, "escape", agent), metav1.CreateOptions{})
			require.Error(t, err, "a Job in %s", ns)
			assert.Contains(t, err.Error(), denied)
			_, err = admin.BatchV1().Jobs(ns).Get(t.Context(), "escape", metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "no Job in %s: %v", ns, err)
		}
		for _, ns := range []string{alice, backend} {
			_, err := asTasks.BatchV1().Jobs(ns).Create(t.Context(), job(ns, "served", agent), metav1.CreateOptions{})
			require.NoError(t, err, "a Job in served namespace %s", ns)
			require.NoError(t, asTasks.BatchV1().Jobs(ns).Delete(t.Context(), "served", metav1.DeleteOptions{}))
		}
		_, err := admin.BatchV1().Jobs(backend).Create(t.Context(), job(backend, "team-etl", map[string]string{"app": "etl"}), metav1.CreateOptions{})
		require.NoError(t, err)
		err = asTasks.BatchV1().Jobs(backend).Delete(t.Context(), "team-etl", metav1.DeleteOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the tasks manager may delete only the agent Jobs it created (labels app.kubernetes.io/managed-by, app.kubernetes.io/component); team-etl is not one")
		_, err = admin.BatchV1().Jobs(backend).Get(t.Context(), "team-etl", metav1.GetOptions{})
		require.NoError(t, err, "the team's Job is untouched")

		_, err = admin.BatchV1().Jobs(backend).Create(t.Context(), job(backend, "agent-task", agent), metav1.CreateOptions{})
		require.NoError(t, err)
		require.NoError(t, asTasks.BatchV1().Jobs(backend).Delete(t.Context(), "agent-task", metav1.DeleteOptions{}))
		require.NoError(t, admin.BatchV1().Jobs(backend).Delete(t.Context(), "team-etl", metav1.DeleteOptions{}), "anyone else's RBAC decides")
	})
}
