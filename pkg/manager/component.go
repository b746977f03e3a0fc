package manager

import (
	"context"
	"errors"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/generated/clientset/versioned"
)

// Component declares one manager binary. Only Name, LeaderElectionID and
// Setup are required; the function fields are called after flags are parsed.
type Component struct {
	// Name is the short component name, e.g. "tasks". It is the command name
	// and the suffix of the field owner.
	Name string
	// LeaderElectionID names the leader-election Lease; distinct per binary.
	LeaderElectionID string
	// Short and Long are the command's help texts.
	Short string
	Long  string

	// AddToScheme registers API types beyond client-go's built-in ones.
	AddToScheme []func(*runtime.Scheme) error
	// AddFlags registers the component's own flags on the command's flag set.
	// Use BindEnv for environment-variable fallbacks.
	AddFlags func(fs *pflag.FlagSet)
	// Validate checks the component's own flags after parsing; errors should
	// name the offending flag.
	Validate func() error
	// Namespaces returns the namespaces the manager watches; an empty list
	// watches all namespaces.
	Namespaces func() Namespaces
	// LogValues returns key/value pairs of component options for the startup
	// log line. Never include secrets.
	LogValues func() []any
	// Setup registers the component's controllers, runnables and checks with
	// deps.Manager. It runs before the manager starts; ctx is cancelled on shutdown.
	Setup func(ctx context.Context, deps *Deps) error
}

// FieldOwner is the server-side apply field manager of the component,
// "opsnorth-scheduler-<name>".
func (c Component) FieldOwner() string { return "opsnorth-scheduler-" + c.Name }

func (c Component) validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("component: Name is required"))
	}
	if c.LeaderElectionID == "" {
		errs = append(errs, errors.New("component: LeaderElectionID is required"))
	}
	if c.Setup == nil {
		errs = append(errs, errors.New("component: Setup is required"))
	}
	return errors.Join(errs...)
}

// Deps is what Component.Setup receives.
type Deps struct {
	// Manager is the controller-runtime manager. Register controllers with
	// ctrl.NewControllerManagedBy(Manager), watching informers of Informers
	// and Kube (source.Informer), and record events with
	// Manager.GetEventRecorder(FieldOwner) (events.k8s.io/v1). Its cache
	// starts no informer of its own: a cached read of a kind without one
	// fails (ErrResourceNotCached); GetAPIReader reads uncached.
	Manager ctrl.Manager
	// Options are the parsed common options. MaxConcurrentReconciles is
	// already the manager-wide controller default.
	Options Options
	// FieldOwner is the server-side apply field manager for this binary.
	FieldOwner string
	// Clientset is the generated typed client of the scheduler API; writes go
	// through it with server-side apply under FieldOwner.
	Clientset versioned.Interface
	// Informers are the generated shared informer factories of the scheduler
	// API. Request informers in Setup: the factories start with the manager,
	// on every replica, and readyz waits for their caches to sync.
	Informers *SchedulerInformers
	// Kube hands out the informers of built-in kinds. Request them in
	// Setup: they start with the manager like Informers.
	Kube *KubeInformers
}

// SetupWith returns a Component.Setup that builds the component's
// configuration from its parsed flags with config, then registers its
// controllers with setup.
func SetupWith[C any](config func() (C, error), setup func(context.Context, *Deps, C) error) func(context.Context, *Deps) error {
	return func(ctx context.Context, deps *Deps) error {
		cfg, err := config()
		if err != nil {
			return err
		}
		return setup(ctx, deps, cfg)
	}
}
