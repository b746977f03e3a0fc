package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// control is one of the Workflow controls: check refuses what makes no
// sense in the workflow's state, patch is the merge patch (nil when there
// is nothing to write, which noop then says) and done what to say after.
type control struct {
	use, short, long, done, noop string
	check                        func(wf *v1alpha1.Workflow) error
	patch                        func(wf *v1alpha1.Workflow) map[string]any
}

func newSuspendCommand(o *Options) *cobra.Command { return o.controlCommand(suspendControl()) }

func suspendControl() control {
	return control{
		use: "suspend WORKFLOW", short: "Suspend a workflow: no new step starts, running steps finish", done: "suspended",
		long: "suspend sets spec.suspend: no new step starts, running steps finish and keep their outputs,\n" +
			"and the workflow shows phase Suspended until resume.",
		check: unfinished("suspend"),
		patch: func(*v1alpha1.Workflow) map[string]any {
			return map[string]any{"spec": map[string]any{"suspend": true}}
		},
	}
}

func newResumeCommand(o *Options) *cobra.Command { return o.controlCommand(resumeControl()) }

func resumeControl() control {
	return control{
		use: "resume WORKFLOW", short: "Resume a suspended workflow", done: "resumed", noop: "is not suspended",
		long:  "resume clears spec.suspend: the workflow continues where it was.",
		check: func(*v1alpha1.Workflow) error { return nil },
		patch: func(wf *v1alpha1.Workflow) map[string]any {
			if !wf.Spec.Suspend {
				return nil
			}
			return map[string]any{"spec": map[string]any{"suspend": false}}
		},
	}
}

func newStopCommand(o *Options) *cobra.Command { return o.controlCommand(stopControl()) }

func stopControl() control {
	return control{
		use: "stop WORKFLOW", short: "Stop a workflow: its running steps are deleted and it fails (reason Stopped)", done: "stopped",
		long: "stop sets spec.stop: the workflows manager deletes the running step tasks (their pods stop)\n" +
			"and ends the workflow Failed with reason Stopped. retry runs it again.",
		check: unfinished("stop"),
		patch: func(*v1alpha1.Workflow) map[string]any { return map[string]any{"spec": map[string]any{"stop": true}} },
	}
}

func newRetryCommand(o *Options) *cobra.Command { return o.controlCommand(retryControl()) }

func retryControl() control {
	return control{
		use: "retry WORKFLOW", short: "Retry a failed workflow: its failed and skipped steps run again", done: "retried",
		long: "retry raises spec.retry to status.retries+1 and clears spec.stop, only for a Failed workflow.\n" +
			"Succeeded steps keep their outputs. The write carries the resourceVersion it read, so a\n" +
			"concurrent change (another retry) makes it fail instead of retrying twice.",
		check: func(wf *v1alpha1.Workflow) error {
			if wf.Status.Phase != v1alpha1.WorkflowFailed {
				return fmt.Errorf("workflow %s is %s: only a Failed workflow can be retried", wf.Name, phaseWord(wf.Status.Phase))
			}
			if wf.Spec.Retry != wf.Status.Retries {
				return fmt.Errorf("workflow %s: retry %d is already requested and has not started yet", wf.Name, wf.Spec.Retry)
			}
			return nil
		},
		patch: func(wf *v1alpha1.Workflow) map[string]any {
			return map[string]any{
				"metadata": map[string]any{"resourceVersion": wf.ResourceVersion},
				"spec":     map[string]any{"retry": wf.Status.Retries + 1, "stop": false},
			}
		},
	}
}

// unfinished refuses verb on a workflow that already finished.
func unfinished(verb string) func(*v1alpha1.Workflow) error {
	return func(wf *v1alpha1.Workflow) error {
		if wf.Status.Phase.IsTerminal() {
			return fmt.Errorf("workflow %s already finished (%s): nothing to %s", wf.Name, wf.Status.Phase, verb)
		}
		return nil
	}
}

func phaseWord(p v1alpha1.WorkflowPhase) string {
	if p == "" {
		return string(v1alpha1.WorkflowPending)
	}
	return string(p)
}

func (o *Options) controlCommand(ctl control) *cobra.Command {
	return &cobra.Command{
		Use: ctl.use, Short: ctl.short, Long: ctl.long,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect()
			if err != nil {
				return err
			}
			return o.runControl(cmd.Context(), c, ctl, args[0])
		},
	}
}

func (o *Options) runControl(ctx context.Context, c *clients, ctl control, name string) error {
	obj, err := fetch(ctx, c, workflowResource, name)
	if err != nil {
		return err
	}
	wf := obj.(*v1alpha1.Workflow)
	if err := ctl.check(wf); err != nil {
		return err
	}
	patch := ctl.patch(wf)
	if patch == nil {
		_, err := fmt.Fprintf(o.Out, "workflow %s %s: nothing to do\n", name, ctl.noop)
		return err
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = c.scheduler().Workflows(wf.Namespace).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("workflow %s changed since it was read (someone else retried it?): look again with get, then retry", name)
	}
	if err != nil {
		return fmt.Errorf("patch workflow %s: %w", name, err)
	}
	_, err = fmt.Fprintf(o.Out, "workflow %s %s\n", name, ctl.done)
	return err
}
