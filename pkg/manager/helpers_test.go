package manager

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commonEnv lists the environment variables bound by Options.AddFlags.
var commonEnv = []string{
	"LEADER_ELECTION_NAMESPACE", "MAX_CONCURRENT_RECONCILES", "KUBE_API_QPS", "KUBE_API_BURST", "DEV_MODE",
}

// unsetEnv removes the variables for the duration of the test.
func unsetEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		t.Setenv(name, "")
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
}

// testComponent is a component with one flag of its own, --widget / WIDGET.
func testComponent(widget *string) Component {
	return Component{
		Name:             "test",
		LeaderElectionID: "test.scheduler.opsnorth.io",
		Short:            "test manager",
		AddFlags: func(fs *pflag.FlagSet) {
			fs.StringVar(widget, "widget", "gear", "Widget to make.")
			BindEnv(fs, "widget", "WIDGET")
		},
		Setup: func(context.Context, *Deps) error { return nil },
	}
}

// capture is a RunFunc recording what it was called with.
type capture struct {
	called bool
	opts   Options
	comp   Component
	err    error
}

func (c *capture) run(_ context.Context, opts Options, comp Component) error {
	c.called, c.opts, c.comp = true, opts, comp
	return c.err
}

// execute runs cmd with args and returns its combined output.
func execute(cmd *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}
