package plugin

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

const getExample = `  # A workflow as a tree of steps
  kubectl opsnorth get workflow research-report -n agent-tasks

  # An AgentTask or a UserDeployment, with what keeps it stuck first
  kubectl opsnorth get task summarize-1
  kubectl opsnorth get onud/blog

  # For scripts: the Workflow and its steps' AgentTasks as a v1 List
  kubectl opsnorth get workflow research-report -o json`

func newGetCommand(o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get KIND NAME",
		Short: "Show a workflow's steps, or an agenttask or userdeployment with what keeps it stuck",
		Long: "get shows one object. A workflow is shown as a header and one line per step, a DAG as a tree\n" +
			"of dependsOn. An agenttask or userdeployment that is stuck (Stalled, Ready=False with nothing\n" +
			"in progress, or Pending for a reason) shows that reason and message first.\n\n" +
			"-o json|yaml prints the object instead; for a workflow, a v1 List of the Workflow followed by\n" +
			"the AgentTasks of its steps' latest attempts.",
		Example: getExample,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, name, err := kindAndName(args)
			if err != nil {
				return err
			}
			if err := validOutput(output); err != nil {
				return err
			}
			c, err := o.connect()
			if err != nil {
				return err
			}
			obj, err := fetch(cmd.Context(), c, r, name)
			if err != nil {
				return err
			}
			return o.show(cmd.Context(), o.Out, c, r, obj, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml: print the object (a workflow with its step tasks) for scripts")
	return cmd
}

// fetch reads the named object, saying plainly when it does not exist.
func fetch(ctx context.Context, c *clients, r *resource, name string) (runtime.Object, error) {
	obj, err := r.get(ctx, c, name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s %q not found in namespace %q", r.name, name, c.namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", r.name, name, err)
	}
	return obj, nil
}

// show renders obj for people, or prints it as json or yaml.
func (o *Options) show(ctx context.Context, w io.Writer, c *clients, r *resource, obj runtime.Object, output string) error {
	if output == "" {
		return r.render(o, w, escaped(obj))
	}
	objs, err := r.objects(ctx, c, obj)
	if err != nil {
		return err
	}
	return printObjects(w, output, objs)
}
