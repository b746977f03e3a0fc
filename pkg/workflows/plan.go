package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/refusal"
	"opsnorth.io/scheduler/pkg/tenancy"
	"opsnorth.io/scheduler/pkg/workflows/dag"
)

// observation is everything a decision is made from.
type observation struct {
	wf *v1alpha1.Workflow
	// graph is the validated step graph; nil when invalid is set.
	graph   *dag.Graph
	invalid error
	// tenant, when set, refuses a workflow that has not started because its
	// namespace does not admit its user (tenancy.CheckBinding).
	tenant tenancy.Denial
	// tasks are the AgentTasks the workflow controls, by name.
	tasks map[string]*v1alpha1.AgentTask
	// lost are task names the status recorded that no longer exist.
	lost map[string]bool
	// refused are the steps whose AgentTask the API server refused for
	// good, by step index (package refusal).
	refused map[int]refusal.Refusal
	now     time.Time
	budget  Budget
}

// start is a step attempt to create.
type start struct {
	step    int
	attempt int32
	input   map[string]string
}

// plan is the outcome of a decision: the status to write, the tasks to
// create, and when to look again.
type plan struct {
	status v1alpha1.WorkflowStatus
	starts []start
	// requeue is when to reconcile again without an event; 0 means never.
	requeue time.Duration
	// reason is the summary reason of status (also the failure reason).
	reason string
}

// decide computes the workflow's status and the step attempts to start. It
// is pure: the controller creates the starts, adds them to the observation
// and decides again, at most three rounds a reconcile; what is left then is
// started by the reconcile its status write brings.
func decide(obs *observation) plan {
	wf := obs.wf
	st := wf.Status.DeepCopy()
	st.ObservedGeneration = wf.Generation
	if st.StartTime == nil {
		st.StartTime = new(stamp(obs.now))
	}
	views := make([]stepView, len(wf.Spec.Steps))
	for i := range wf.Spec.Steps {
		views[i] = stepView{status: v1alpha1.StepStatus{Name: wf.Spec.Steps[i].Name, Phase: v1alpha1.StepPending}}
	}
	p := plan{}
	if obs.invalid != nil || obs.tenant.Denied() {
		reason, msg := obs.tenant.Reason, obs.tenant.Message
		switch {
		case obs.tenant.Denied():
		case errors.As(obs.invalid, new(*inputTooLargeError)):
			reason, msg = ReasonInputTooLarge, obs.invalid.Error()
		default:
			reason, msg = ReasonInvalidSpec, "invalid spec: "+obs.invalid.Error()
		}
		finish(obs, st, views, reason, msg)
		st.CurrentStep = currentStep(st.StepStatuses)
		st.Progress = progress(st.StepStatuses)
		p.status, p.reason = *st, reason
		return p
	}
	for i := range views {
		prev := prevStep(st, wf.Spec.Steps[i].Name)
		if wf.Spec.Steps[i].Approval != nil {
			views[i] = observeApproval(obs, i, prev)
			continue
		}
		views[i] = observeStep(obs, i, prev)
		if ref, ok := obs.refused[i]; ok {
			views[i] = views[i].fail(obs, nil, ref.Reason, "the API server refused the step's AgentTask: "+ref.Message)
		}
	}
	enforceBudget(obs, views)
	failed := slices.IndexFunc(views, func(v stepView) bool { return v.status.Phase == v1alpha1.StepFailed })
	paused := suspended(wf)
	if failed < 0 && !paused && !wf.Spec.Stop {
		p.starts, failed = startable(obs, views)
	}
	account(st, paused, obs.now)
	deadline := deadline(wf, st, obs.now)
	switch {
	case failed >= 0:
		p.starts = nil
		v := views[failed]
		p.reason = v.reason
		finish(obs, st, views, v.reason, fmt.Sprintf("step %q failed: %s", v.status.Name, v.status.Message))
	case wf.Spec.Stop:
		p.starts, p.reason = nil, ReasonStopped
		finish(obs, st, views, ReasonStopped, "stopped (spec.stop): "+runningMessage(views))
	case !deadline.IsZero() && !obs.now.Before(deadline):
		p.starts, p.reason = nil, ReasonTimeout
		finish(obs, st, views, ReasonTimeout, fmt.Sprintf("workflow timed out after %ds", *wf.Spec.TimeoutSeconds))
	case !slices.ContainsFunc(views, func(v stepView) bool { return !done(v.status) }):
		p.reason = ReasonSucceeded
		finish(obs, st, views, ReasonSucceeded, succeededMessage(views))
	case paused:
		p.reason = ReasonSuspended
		st.Phase = v1alpha1.WorkflowSuspended
		st.Message = suspendedMessage(views)
		st.StepStatuses = statuses(views)
		conditions.SetSummary(&st.Conditions, wf.Generation, conditions.Paused, ReasonSuspended, st.Message)
		p.requeue = nextWake(obs.now, time.Time{}, views)
	default:
		p.reason = ReasonRunning
		st.Phase = v1alpha1.WorkflowRunning
		st.Message = runningMessage(views)
		st.StepStatuses = statuses(views)
		conditions.SetSummary(&st.Conditions, wf.Generation, conditions.InProgress, ReasonRunning, st.Message)
		p.requeue = nextWake(obs.now, deadline, views)
	}
	setSuspended(&st.Conditions, wf.Generation, st.Phase == v1alpha1.WorkflowSuspended)
	st.CurrentStep = currentStep(st.StepStatuses)
	st.Progress = progress(st.StepStatuses)
	p.status = *st
	return p
}

// startable returns the attempts to start now: retries whose backoff passed
// and steps whose dependencies all succeeded. A step whose input cannot be
// resolved is failed instead, and its index returned.
func startable(obs *observation, views []stepView) ([]start, int) {
	var out []start
	started := make([]bool, len(views))
	succeeded := make([]bool, len(views))
	for i, v := range views {
		started[i] = v.status.Phase != v1alpha1.StepPending
		succeeded[i] = done(v.status)
		if v.status.Phase == v1alpha1.StepRetrying && !obs.now.Before(v.retryAt) {
			out = append(out, start{step: i, attempt: v.status.Attempts})
		}
	}
	for _, i := range obs.graph.Runnable(started, succeeded) {
		out = append(out, start{step: i, attempt: views[i].status.Attempts})
	}
	slices.SortFunc(out, func(a, b start) int { return a.step - b.step })
	tasks := out[:0]
	for k := range out {
		var input map[string]string
		var err error
		if obs.wf.Spec.Steps[out[k].step].Approval != nil {
			err = wait(obs, views, out[k].step)
		} else {
			input, err = resolveInput(obs, views, out[k].step)
		}
		if err != nil {
			i, reason := out[k].step, ReasonMissingOutput
			switch {
			case errors.As(err, new(*inputTooLargeError)):
				reason = ReasonInputTooLarge
			case errors.As(err, new(*outputTruncatedError)):
				reason = v1alpha1.ReasonOutputTruncated
			}
			views[i] = views[i].fail(obs, nil, reason, err.Error())
			return nil, i
		}
		if obs.wf.Spec.Steps[out[k].step].Approval == nil {
			out[k].input = input
			tasks = append(tasks, out[k])
		}
	}
	return tasks, -1
}

// finish makes the workflow terminal: steps that had not finished are stopped.
func finish(obs *observation, st *v1alpha1.WorkflowStatus, views []stepView, reason, msg string) {
	state, phase := conditions.Failed, v1alpha1.WorkflowFailed
	if reason == ReasonSucceeded {
		state, phase = conditions.Succeeded, v1alpha1.WorkflowSucceeded
	}
	for i := range views {
		views[i].stop(obs.now, "the workflow "+strings.ToLower(string(phase))+": "+msg)
	}
	account(st, false, obs.now)
	st.Phase, st.Message = phase, msg
	st.StepStatuses = statuses(views)
	st.CompletionTime = new(stamp(obs.now))
	st.Duration = st.CompletionTime.Sub(st.StartTime.Time).String()
	conditions.SetSummary(&st.Conditions, obs.wf.Generation, state, reason, msg)
}

func statuses(views []stepView) []v1alpha1.StepStatus {
	out := make([]v1alpha1.StepStatus, len(views))
	for i, v := range views {
		out[i] = v.status
	}
	return out
}

func runningMessage(views []stepView) string {
	succeeded := 0
	var active, waiting, refused []string
	for _, v := range views {
		switch v.status.Phase {
		case v1alpha1.StepSucceeded:
			succeeded++
		case v1alpha1.StepRunning, v1alpha1.StepRetrying:
			active = append(active, v.status.Name)
		case v1alpha1.StepWaiting:
			waiting = append(waiting, v.status.Name)
			if v.refused != "" {
				refused = append(refused, v.status.Name+": "+v.refused)
			}
		}
	}
	msg := fmt.Sprintf("%d of %d steps succeeded", succeeded, len(views))
	if len(active) > 0 {
		msg += "; running: " + strings.Join(active, ", ")
	}
	if len(waiting) > 0 {
		msg += "; waiting for approval: " + strings.Join(waiting, ", ")
	}
	if len(refused) > 0 {
		msg += "; " + strings.Join(refused, "; ")
	}
	return msg
}

// succeededMessage sums up a workflow all of whose steps are done.
func succeededMessage(views []stepView) string {
	skipped := 0
	for _, v := range views {
		if v.status.Phase == v1alpha1.StepSkipped {
			skipped++
		}
	}
	if skipped == 0 {
		return fmt.Sprintf("all %d steps succeeded", len(views))
	}
	return fmt.Sprintf("%d of %d steps succeeded; %d approval step(s) skipped at their timeout", len(views)-skipped, len(views), skipped)
}

// nextWake is how long until the earliest retry or the workflow deadline.
func nextWake(now, deadline time.Time, views []stepView) time.Duration {
	var wake time.Time
	for _, v := range views {
		pending := v.status.Phase == v1alpha1.StepRetrying || v.status.Phase == v1alpha1.StepWaiting
		if pending && !v.retryAt.IsZero() && (wake.IsZero() || v.retryAt.Before(wake)) {
			wake = v.retryAt
		}
	}
	if !deadline.IsZero() && (wake.IsZero() || deadline.Before(wake)) {
		wake = deadline
	}
	if wake.IsZero() {
		return 0
	}
	return max(wake.Sub(now), time.Millisecond)
}

// currentStep is the index of the first unfinished step.
func currentStep(steps []v1alpha1.StepStatus) int32 {
	for i, s := range steps {
		switch s.Phase {
		case v1alpha1.StepSucceeded, v1alpha1.StepFailed, v1alpha1.StepSkipped:
		default:
			return int32(i)
		}
	}
	return int32(len(steps))
}

func prevStep(st *v1alpha1.WorkflowStatus, name string) *v1alpha1.StepStatus {
	for i := range st.StepStatuses {
		if st.StepStatuses[i].Name == name {
			return &st.StepStatuses[i]
		}
	}
	return nil
}

// refuse records that the API server refused step i's task for good.
func (obs *observation) refuse(i int, ref refusal.Refusal) {
	if obs.refused == nil {
		obs.refused = map[int]refusal.Refusal{}
	}
	obs.refused[i] = ref
}

// withTask adds a task just created, for deciding again.
func (obs *observation) withTask(t *v1alpha1.AgentTask) {
	if obs.tasks == nil {
		obs.tasks = map[string]*v1alpha1.AgentTask{}
	}
	obs.tasks[t.Name] = t
}
