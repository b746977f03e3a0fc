package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// resource is one of our kinds as get and watch see it.
type resource struct {
	// kind is the Kind; name the lower-case word messages use.
	kind, name string
	get        func(ctx context.Context, c *clients, name string) (runtime.Object, error)
	watch      func(ctx context.Context, c *clients, opts metav1.ListOptions) (watch.Interface, error)
	render     func(o *Options, w io.Writer, obj runtime.Object) error
	// objects are what -o prints: the object, and for a workflow its step tasks.
	objects func(ctx context.Context, c *clients, obj runtime.Object) ([]runtime.Object, error)
	// ended reports whether obj reached a phase it cannot leave, and that
	// phase; UserDeployments never end.
	ended func(obj runtime.Object) (bool, string)
}

// kindNames lists what the commands accept as KIND.
const kindNames = "workflow (onwf, wf), agenttask (onat, at, task) or userdeployment (onud, ud)"

// resourceFor resolves a KIND argument, as kubectl does: singular, plural
// or short name. The plugin knows only our kinds, so it still takes the
// short names the CRDs gave up because another project has them (wf is
// Argo Workflows'; README "Names").
func resourceFor(kind string) (*resource, error) {
	switch strings.ToLower(kind) {
	case "workflow", "workflows", "onwf", "wf":
		return workflowResource, nil
	case "agenttask", "agenttasks", "onat", "at", "task", "tasks":
		return taskResource, nil
	case "userdeployment", "userdeployments", "onud", "ud":
		return userDeploymentResource, nil
	}
	return nil, fmt.Errorf("unknown kind %q: use %s", kind, kindNames)
}

// kindAndName splits the arguments KIND NAME or KIND/NAME.
func kindAndName(args []string) (*resource, string, error) {
	kind, name := "", ""
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		kind, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2:
		kind, name = args[0], args[1]
	default:
		return nil, "", fmt.Errorf("want KIND NAME or KIND/NAME, where KIND is %s", kindNames)
	}
	r, err := resourceFor(kind)
	if err != nil {
		return nil, "", err
	}
	if name == "" {
		return nil, "", fmt.Errorf("missing the %s's name", r.name)
	}
	return r, name, nil
}

var workflowResource = &resource{
	kind: "Workflow", name: "workflow",
	get: func(ctx context.Context, c *clients, name string) (runtime.Object, error) {
		return c.scheduler().Workflows(c.namespace).Get(ctx, name, metav1.GetOptions{})
	},
	watch: func(ctx context.Context, c *clients, opts metav1.ListOptions) (watch.Interface, error) {
		return c.scheduler().Workflows(c.namespace).Watch(ctx, opts)
	},
	render: func(o *Options, w io.Writer, obj runtime.Object) error {
		return o.renderWorkflow(w, obj.(*v1alpha1.Workflow))
	},
	objects: workflowObjects,
	ended: func(obj runtime.Object) (bool, string) {
		p := obj.(*v1alpha1.Workflow).Status.Phase
		return p.IsTerminal(), string(p)
	},
}

var taskResource = &resource{
	kind: "AgentTask", name: "agenttask",
	get: func(ctx context.Context, c *clients, name string) (runtime.Object, error) {
		return c.scheduler().AgentTasks(c.namespace).Get(ctx, name, metav1.GetOptions{})
	},
	watch: func(ctx context.Context, c *clients, opts metav1.ListOptions) (watch.Interface, error) {
		return c.scheduler().AgentTasks(c.namespace).Watch(ctx, opts)
	},
	render: func(o *Options, w io.Writer, obj runtime.Object) error {
		return o.renderTask(w, obj.(*v1alpha1.AgentTask))
	},
	objects: onlyObject,
	ended: func(obj runtime.Object) (bool, string) {
		p := obj.(*v1alpha1.AgentTask).Status.Phase
		return p.IsTerminal(), string(p)
	},
}

var userDeploymentResource = &resource{
	kind: "UserDeployment", name: "userdeployment",
	get: func(ctx context.Context, c *clients, name string) (runtime.Object, error) {
		return c.scheduler().UserDeployments(c.namespace).Get(ctx, name, metav1.GetOptions{})
	},
	watch: func(ctx context.Context, c *clients, opts metav1.ListOptions) (watch.Interface, error) {
		return c.scheduler().UserDeployments(c.namespace).Watch(ctx, opts)
	},
	render: func(o *Options, w io.Writer, obj runtime.Object) error {
		return o.renderUserDeployment(w, obj.(*v1alpha1.UserDeployment))
	},
	objects: onlyObject,
	ended:   func(runtime.Object) (bool, string) { return false, "" },
}

func onlyObject(_ context.Context, _ *clients, obj runtime.Object) ([]runtime.Object, error) {
	return []runtime.Object{obj}, nil
}

// workflowObjects are the workflow and the AgentTasks of its steps' latest
// attempts, in step order; tasks already deleted are left out.
func workflowObjects(ctx context.Context, c *clients, obj runtime.Object) ([]runtime.Object, error) {
	wf := obj.(*v1alpha1.Workflow)
	out := []runtime.Object{wf}
	for _, st := range wf.Status.StepStatuses {
		if st.TaskName == "" {
			continue
		}
		task, err := c.scheduler().AgentTasks(wf.Namespace).Get(ctx, st.TaskName, metav1.GetOptions{})
		if ignoreNotFound(err) != nil {
			return nil, fmt.Errorf("get agenttask %s of step %s: %w", st.TaskName, st.Name, err)
		}
		if err == nil {
			out = append(out, task)
		}
	}
	return out, nil
}
