package manager

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"

	"github.com/spf13/cobra"
)

// version is set at build time with
// -ldflags "-X opsnorth.io/scheduler/pkg/manager.version=<version>".
var version = "dev"

// Version returns the version the binary was built with.
func Version() string { return version }

// RunFunc runs a component with validated options until ctx is cancelled.
type RunFunc func(ctx context.Context, opts Options, c Component) error

// CommandOption customises NewCommand.
type CommandOption func(*commandConfig)

type commandConfig struct {
	run RunFunc
}

// WithRunFunc replaces Run, e.g. in tests that check flag parsing and
// validation without a cluster.
func WithRunFunc(run RunFunc) CommandOption {
	return func(c *commandConfig) { c.run = run }
}

// NewCommand returns the cobra command of a manager binary: it registers the
// common and component flags, applies environment fallbacks and validates in
// PreRunE, and runs the manager in RunE.
func NewCommand(c Component, options ...CommandOption) *cobra.Command {
	cfg := commandConfig{run: Run}
	for _, apply := range options {
		apply(&cfg)
	}
	opts := &Options{}
	cmd := &cobra.Command{
		Use:     c.Name,
		Short:   c.Short,
		Long:    c.Long,
		Args:    cobra.NoArgs,
		Version: version,
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.validate(); err != nil {
				return err
			}
			if err := applyEnvFromOS(cmd.Flags()); err != nil {
				return err
			}
			errs := []error{opts.Validate()}
			if c.Validate != nil {
				errs = append(errs, c.Validate())
			}
			return errors.Join(errs...)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SilenceUsage = true
			return cfg.run(cmd.Context(), *opts, c)
		},
	}
	cmd.SetVersionTemplate(fmt.Sprintf("{{.Name}} {{.Version}} (%s %s/%s)\n",
		goruntime.Version(), goruntime.GOOS, goruntime.GOARCH))
	// The chart's `helm test` runs it; no shell completion command.
	cmd.AddCommand(newCheckInstallCommand())
	cmd.CompletionOptions.DisableDefaultCmd = true
	fs := cmd.Flags()
	fs.SortFlags = false
	opts.AddFlags(fs)
	if c.AddFlags != nil {
		c.AddFlags(fs)
	}
	return cmd
}
