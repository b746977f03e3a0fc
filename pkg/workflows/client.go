package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	applyv1alpha1 "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

var getOptions = metav1.GetOptions{}

func createOptions(fieldOwner string) metav1.CreateOptions {
	return metav1.CreateOptions{FieldManager: fieldOwner}
}

// deleteOptions deletes exactly the task observed (not a successor of the
// same name) and lets garbage collection remove its Job in the background.
func deleteOptions(uid types.UID) metav1.DeleteOptions {
	bg := metav1.DeletePropagationBackground
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &bg}
}

// gather collects what a decision needs: the validated graph, the tasks the
// workflow controls and which recorded tasks were deleted.
func (r *Reconciler) gather(ctx context.Context, wf *v1alpha1.Workflow) (*observation, error) {
	obs := &observation{wf: wf, now: r.now(), budget: r.budget, lost: map[string]bool{}}
	obs.graph, obs.invalid = validateSpec(&wf.Spec)
	if !started(wf) {
		var err error
		if obs.tenant, err = r.bindings.Check(wf.Namespace, wf.Spec.UserID); err != nil {
			return nil, err
		}
	}
	tasks, err := r.ownedTasks(wf)
	if err != nil {
		return nil, err
	}
	obs.tasks = tasks
	// A task the status recorded but the cache lacks was either created a
	// moment ago (the cache lags) or deleted. A create of this manager whose
	// deletion was not seen yet answers it; otherwise only the API server can.
	for _, s := range wf.Status.StepStatuses {
		if s.Attempts <= s.FirstAttempt || s.Phase == v1alpha1.StepSucceeded {
			continue
		}
		name := TaskName(wf.Name, s.Name, s.Attempts-1)
		key := k8sName(wf.Namespace, name)
		if obs.tasks[name] != nil {
			r.created.Delete(key)
			continue
		}
		if c, ok := r.created.Load(key); ok {
			obs.tasks[name] = c.(*v1alpha1.AgentTask)
			continue
		}
		t, err := r.client.SchedulerV1alpha1().AgentTasks(wf.Namespace).Get(ctx, name, getOptions)
		switch {
		case apierrors.IsNotFound(err):
			obs.lost[name] = true
		case err != nil:
			return nil, fmt.Errorf("get AgentTask %s: %w", name, err)
		case r.signer.isStep(t, wf):
			obs.tasks[name] = t
		default:
			obs.lost[name] = true
		}
	}
	return obs, nil
}

// ownedTasks returns the AgentTasks in the cache that wf controls, by name.
func (r *Reconciler) ownedTasks(wf *v1alpha1.Workflow) (map[string]*v1alpha1.AgentTask, error) {
	sel := labels.SelectorFromSet(labels.Set{labelkeys.Workflow: labelValue(wf.Name)})
	list, err := r.tasks(wf.Namespace).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list AgentTasks of workflow: %w", err)
	}
	out := make(map[string]*v1alpha1.AgentTask, len(list))
	for _, t := range list {
		if r.signer.isStep(t, wf) {
			out[t.Name] = t
		}
	}
	return out, nil
}

// writeStatus applies status with server-side apply, as the only owner of
// the status, guarded by the resourceVersion the decision was made on. It
// reports false (and no error) when the workflow changed meanwhile: its
// update event brings a fresh decision.
func (r *Reconciler) writeStatus(ctx context.Context, wf *v1alpha1.Workflow, status *v1alpha1.WorkflowStatus) (bool, error) {
	raw, err := json.Marshal(status)
	if err != nil {
		return false, fmt.Errorf("encode workflow status: %w", err)
	}
	ac := applyv1alpha1.Workflow(wf.Name, wf.Namespace).WithResourceVersion(wf.ResourceVersion)
	ac.Status = &applyv1alpha1.WorkflowStatusApplyConfiguration{}
	if err := json.Unmarshal(raw, ac.Status); err != nil {
		return false, fmt.Errorf("build workflow status apply configuration: %w", err)
	}
	updated, err := r.client.SchedulerV1alpha1().Workflows(wf.Namespace).ApplyStatus(ctx, ac,
		metav1.ApplyOptions{FieldManager: r.fieldOwner, Force: true})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		logf.FromContext(ctx).V(1).Info("workflow changed while deciding; waiting for its update", "error", err.Error())
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("apply workflow status: %w", err)
	}
	if updated.ResourceVersion != wf.ResourceVersion {
		r.written.Store(k8sName(wf.Namespace, wf.Name), wf.ResourceVersion, updated)
	}
	return true, nil
}

func k8sName(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// started reports whether any step of wf was attempted.
func started(wf *v1alpha1.Workflow) bool {
	return slices.ContainsFunc(wf.Status.StepStatuses, func(s v1alpha1.StepStatus) bool { return s.Attempts > 0 })
}
