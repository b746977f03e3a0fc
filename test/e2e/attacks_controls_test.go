//go:build e2e

package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// change gets a Workflow through cs, applies mutate and updates it (a dry
// run unless real).
func change(cs versioned.Interface, ns, name string, real bool, mutate func(*v1alpha1.Workflow)) func(context.Context) error {
	return func(ctx context.Context) error {
		wf, err := cs.SchedulerV1alpha1().Workflows(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(wf)
		opts := metav1.UpdateOptions{}
		if !real {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = cs.SchedulerV1alpha1().Workflows(ns).Update(ctx, wf, opts)
		return err
	}
}

func decide(by string, groups ...string) func(*v1alpha1.Workflow) {
	return func(wf *v1alpha1.Workflow) {
		wf.Spec.Approvals = append(wf.Spec.Approvals, v1alpha1.Approval{Step: "review", By: by, ByGroups: groups,
			Decision: v1alpha1.DecisionApprove, Comment: "ship it"})
	}
}

// approvals: gates decided by the wrong people, and another user's run
// steered by a colleague in a backend namespace.
func (g *attackGround) approvals(t *testing.T) []attack {
	w := g.w
	tenant, approver := w.as(t, w.tenant), w.as(t, w.approver, w.reviewers)
	colleague, operator, backer := w.as(t, w.colleague), w.as(t, w.operator), w.as(t, w.backer)
	stop := func(wf *v1alpha1.Workflow) { wf.Spec.Stop = true }
	suspend := func(wf *v1alpha1.Workflow) { wf.Spec.Suspend = true }
	retry := func(wf *v1alpha1.Workflow) { wf.Spec.Retry = 1 }
	steer := w.colleague + ` does not act for user "` + w.alice + `" in backend namespace ` + w.backend + ": only the workflow's creator (" +
		w.backer + "), the user, or an identity allowed verb control on users.scheduler.opsnorth.io/" + w.alice + " there may"
	return []attack{
		{"tenant: approvals in the create", func(ctx context.Context) error {
			wf := gatedWorkflow(w.alice, "preseeded", w.alice, nil)
			decide(w.tenant)(wf)
			_, err := tenant.SchedulerV1alpha1().Workflows(w.alice).Create(ctx, wf, metav1.CreateOptions{})
			return err
		}, "spec.approvals cannot be set when the workflow is created"},
		{"tenant: approve their own gate", change(tenant, w.alice, g.open, false, decide(w.tenant)),
			"the workflow's creator (" + w.tenant + ") decides on its approval steps only when approvers.allowSelfApproval is set"},
		{"tenant: approve in the approver's name", change(tenant, w.alice, g.named, false, decide(w.approver)),
			"spec.approvals[].by: a new approval must be made in the name of its writer, " + w.tenant},
		{"tenant: rewrite the recorded creator", change(tenant, w.alice, g.named, false, func(wf *v1alpha1.Workflow) {
			wf.Annotations[labelkeys.Creator] = w.bob
		}), "metadata.annotations[scheduler.opsnorth.io/creator]: records who created the workflow"},
		{"approver: claim a group they are not in", change(approver, w.alice, g.others, false, decide(w.approver, "admins")),
			"spec.approvals[].byGroups: a new approval may name only groups its writer, " + w.approver + ", is a member of"},
		{"approver: decide a gate that names someone else", change(approver, w.alice, g.others, false, decide(w.approver)),
			w.approver + " is not among the approvers of the step"},
		{"approver: create a workflow", func(ctx context.Context) error {
			_, err := approver.SchedulerV1alpha1().Workflows(w.alice).Create(ctx, gatedWorkflow(w.alice, "approvers-own", w.alice, nil), metav1.CreateOptions{})
			return err
		}, `cannot create resource "workflows"`},
		{"approver: delete a workflow", func(ctx context.Context) error {
			return approver.SchedulerV1alpha1().Workflows(w.alice).Delete(ctx, g.open, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}, `cannot delete resource "workflows"`},
		{"colleague: stop another user's run in a backend namespace", change(colleague, w.backend, g.backendRun, false, stop), "spec.stop, spec.suspend, spec.retry: " + steer},
		{"colleague: suspend it", change(colleague, w.backend, g.backendRun, false, suspend), steer},
		{"colleague: retry another user's failed run", change(colleague, w.backend, g.failedRun, false, retry), steer},
		{"colleague: approve its gate", change(colleague, w.backend, g.backendRun, false, decide(w.colleague)),
			"spec.approvals: " + steer + " decide when the step names no approvers"},
		{"approver: decide a gate naming them, by name and group (control)", change(approver, w.alice, g.named, true, decide(w.approver, w.reviewers)), ""},
		{"namespace admin: stop a workflow in their bound namespace (control)", change(w.as(t, w.nsAdmin), w.alice, g.open, false, stop), ""},
		{"backend: suspend the run it submitted (control)", change(backer, w.backend, g.backendRun, false, suspend), ""},
		{"operator granted control of alice: stop her run (control)", change(operator, w.backend, g.backendRun, false, stop), ""},
		{"operator granted control of alice: retry her failed run (control)", change(operator, w.backend, g.failedRun, false, retry), ""},
	}
}

// marks: a namespace's binding and the deployments manager's marks, and
// the managers' ServiceAccounts outside what they serve.
func (g *attackGround) marks(t *testing.T) []attack {
	w := g.w
	nsAdmin, nsCreator := w.kube(t, w.nsAdmin), w.kube(t, w.nsCreator)
	relabel := func(ns string, mutate func(*corev1.Namespace)) func(context.Context) error {
		return func(ctx context.Context) error {
			obj, err := nsAdmin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if obj.Labels == nil {
				obj.Labels = map[string]string{}
			}
			if obj.Annotations == nil {
				obj.Annotations = map[string]string{}
			}
			mutate(obj)
			_, err = nsAdmin.CoreV1().Namespaces().Update(ctx, obj, metav1.UpdateOptions{})
			return err
		}
	}
	createNS := func(labels, annotations map[string]string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := nsCreator.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-squat-",
				Labels: labels, Annotations: annotations}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	bind := "needs the verb bind on namespacebindings.scheduler.opsnorth.io; " + w.nsAdmin + " may not on namespace "
	bindNew := "needs the verb bind on namespacebindings.scheduler.opsnorth.io; " + w.nsCreator + " may not"
	mark := "metadata: only the deployments manager may set the marks it recognises its namespaces by"
	createdBy := map[string]string{"scheduler.opsnorth.io/created-by": "opsnorth-scheduler-deployments"}
	sa := func(name string) string {
		return "system:serviceaccount:" + localcluster.ManagerNamespace + ":opsnorth-scheduler-" + name
	}
	tasks, deployments := w.kube(t, sa("tasks")), w.kube(t, sa("deployments"))
	agentJob := func(ns string) func(context.Context) error {
		return func(ctx context.Context) error {
			j := job(ns, "escape")
			j.Labels = map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.Component: "agent"}
			_, err := tasks.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	jobsOnly := func(ns string) string {
		return "the tasks manager may create Job " + ns + "/escape only in a namespace bound to a user"
	}
	return []attack{
		{"namespace admin: rebind their namespace to bob", relabel(w.alice, func(n *corev1.Namespace) { n.Labels[labelkeys.Tenant] = w.bob }), bind + w.alice},
		{"namespace admin: unbind their namespace", relabel(w.alice, func(n *corev1.Namespace) { delete(n.Labels, labelkeys.Tenant) }), bind + w.alice},
		{"namespace admin: make their namespace a backend", relabel(w.team, func(n *corev1.Namespace) { n.Labels[labelkeys.Backend] = labelkeys.BackendValue }), bind + w.team},
		{"namespace admin: give their namespace a users list", relabel(w.alice, func(n *corev1.Namespace) { n.Annotations[labelkeys.BackendUsers] = w.bob }), bind + w.alice},
		{"namespace admin: mark their namespace as the manager's", relabel(w.team, func(n *corev1.Namespace) {
			n.Annotations["scheduler.opsnorth.io/created-by"] = "opsnorth-scheduler-deployments"
		}), mark},
		{"namespace creator: a namespace with the manager's mark", createNS(nil, createdBy), mark},
		{"namespace creator: a namespace bound to bob", createNS(map[string]string{labelkeys.Tenant: w.bob}, nil), bindNew},
		{"namespace creator: a backend namespace", createNS(map[string]string{labelkeys.Backend: labelkeys.BackendValue}, nil), bindNew},
		{"tasks manager: an agent Job in an unmarked namespace", agentJob(w.team), jobsOnly(w.team)},
		{"tasks manager: an agent Job in kube-system", agentJob("kube-system"), "kube-system is a Kubernetes system namespace"},
		{"deployments manager: delete a namespace it did not create", func(ctx context.Context) error {
			return deployments.CoreV1().Namespaces().Delete(ctx, w.bob, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}, "the deployments manager may delete only namespaces it created (annotation scheduler.opsnorth.io/created-by); " + w.bob + " is not one"},
		{"namespace admin: label their namespace otherwise (control)", relabel(w.alice, func(n *corev1.Namespace) { n.Labels["team"] = "a" }), ""},
		{"namespace creator: a plain namespace (control)", createNS(nil, nil), ""},
		{"tasks manager: an agent Job in a bound namespace (control)", agentJob(w.alice), ""},
	}
}
