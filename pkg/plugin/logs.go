package plugin

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

const logsExample = `  # The latest attempt of a workflow step
  kubectl opsnorth logs workflow research-report summarize

  # Its first attempt, and an AgentTask's logs as they come
  kubectl opsnorth logs workflow research-report summarize --attempt 1
  kubectl opsnorth logs task summarize-1 -f`

func newLogsCommand(o *Options) *cobra.Command {
	var follow bool
	var attempt int32
	cmd := &cobra.Command{
		Use:   "logs (workflow NAME STEP | task NAME)",
		Short: "Print the agent's logs of a workflow step or an agenttask",
		Long: "logs finds the pod that ran the agent (step, its AgentTask, the task's Job, the Job's newest\n" +
			"pod) and prints the agent container's log. --attempt N picks the Nth attempt of a step\n" +
			"(1 is the first; by default the latest). Which task and pod it read goes to stderr.",
		Example: logsExample,
		Args:    cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := resourceFor(args[0])
			if err != nil {
				return err
			}
			c, err := o.connect()
			if err != nil {
				return err
			}
			var taskName, what, which string
			switch {
			case r == workflowResource && len(args) == 3:
				taskName, which, err = stepTask(cmd.Context(), c, args[1], args[2], attempt)
				if err != nil {
					return err
				}
				what = "step " + args[2]
				which = what + ", " + which + ": agenttask " + taskName + ","
			case r == taskResource && len(args) == 2 && !cmd.Flags().Changed("attempt"):
				taskName, what = args[1], "agenttask "+args[1]
				which = what + ":"
			default:
				return fmt.Errorf("use logs workflow NAME STEP [--attempt N] or logs task NAME")
			}
			return o.taskLogs(cmd.Context(), c, taskName, what, which, follow)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing the log as the agent writes it")
	cmd.Flags().Int32Var(&attempt, "attempt", 0, "the attempt of the step, 1 for the first (default: the latest)")
	return cmd
}

// taskLogs prints the agent's log of the task named taskName; what names
// it in errors ("step summarize"), which on stderr before the log.
func (o *Options) taskLogs(ctx context.Context, c *clients, taskName, what, which string, follow bool) error {
	task, err := fetch(ctx, c, taskResource, taskName)
	if err != nil {
		return err
	}
	pod, err := taskPod(ctx, c, task.(*v1alpha1.AgentTask), what)
	if err != nil {
		return err
	}
	container, err := agentContainer(pod, what)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(o.ErrOut, "%s pod %s, container %s\n", which, pod.Name, container)
	logs, err := o.StreamLogs(ctx, c.kube, pod.Namespace, pod.Name, &corev1.PodLogOptions{Container: container, Follow: follow})
	if err != nil {
		return fmt.Errorf("logs of pod %s: %w", pod.Name, err)
	}
	defer func() { _ = logs.Close() }()
	if _, err := io.Copy(o.Out, logs); err != nil && ctx.Err() == nil {
		return fmt.Errorf("read logs of pod %s: %w", pod.Name, err)
	}
	return nil
}
