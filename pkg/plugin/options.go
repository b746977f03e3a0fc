// Package plugin is the kubectl plugin `kubectl opsnorth`: it shows
// Workflows, AgentTasks and UserDeployments the way a person wants to read
// them (a workflow as a tree of steps, a stuck object's reason first),
// follows them until they finish, finds a step's logs, and writes the
// Workflow controls (approvals, suspend, resume, stop, retry).
//
// cmd/kubectl-opsnorth only builds the command of NewCommand and runs it;
// everything else lives here, so tests run the commands against a real API
// server with a fixed clock and captured output.
package plugin

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
)

// FieldManager owns what the plugin writes: the approvals it applies and the
// controls it patches.
const FieldManager = "kubectl-opsnorth"

// LogStreamer opens the log stream of one container.
type LogStreamer func(ctx context.Context, kube kubernetes.Interface, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)

// Options are the flags and dependencies every command shares.
type Options struct {
	// ConfigFlags are kubectl's connection flags (--kubeconfig, --context,
	// -n/--namespace, ...).
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	// Now is the clock: ages and running durations count up to it.
	Now func() time.Time
	// Color is auto (colour and symbols when Out is a terminal), always or never.
	Color string
	// StreamLogs reads a container's logs; tests replace it, as no kubelet
	// serves logs under envtest.
	StreamLogs LogStreamer

	clients *clients
	// beforeWrite, when set, runs before each write of a decision (tests
	// race it with a status write).
	beforeWrite func()
}

// NewOptions returns the options of a command run on streams, with the real
// clock and log streams.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		Now:         time.Now,
		Color:       colorAuto,
		StreamLogs:  streamPodLogs,
	}
}

// NewCommand returns the root command `kubectl opsnorth` with its subcommands.
func NewCommand(o *Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-opsnorth",
		Short: "Show and steer opsnorth Workflows, AgentTasks and UserDeployments",
		Long: "kubectl opsnorth shows Workflows as trees of steps, AgentTasks and UserDeployments with what\n" +
			"keeps them stuck, follows them until they finish, prints step logs and writes the Workflow\n" +
			"controls: approve, suspend, resume, stop and retry.",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl opsnorth"},
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			switch o.Color {
			case colorAuto, colorAlways, colorNever:
				return nil
			}
			return fmt.Errorf("--color must be auto, always or never, not %q", o.Color)
		},
	}
	o.ConfigFlags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.Color, "color", o.Color,
		"auto: colour and symbols when stdout is a terminal; always; never")
	root.AddCommand(
		newGetCommand(o), newWatchCommand(o), newLogsCommand(o), newApproveCommand(o),
		newSuspendCommand(o), newResumeCommand(o), newStopCommand(o), newRetryCommand(o),
	)
	return root
}

// Execute runs the command in ctx and prints its error as kubectl does;
// it returns the error so main can pick the exit code.
func Execute(ctx context.Context, cmd *cobra.Command, errOut io.Writer) error {
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		_, _ = fmt.Fprintf(errOut, "error: %v\n", err)
	}
	return err
}
