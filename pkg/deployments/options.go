package deployments

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// Options are the deployments manager's own settings.
type Options struct {
	// DeploymentDomain is the parent DNS domain of deployed apps' hosts.
	DeploymentDomain string
	// ClusterSecretStore names the ClusterSecretStore secrets are read from.
	ClusterSecretStore string
	// SecretKeyPrefix is put before every remote secret key, {userId}
	// replaced with the deployment's user id.
	SecretKeyPrefix string
	// DefaultMaxTier is the most generous tier of a bound namespace that
	// has no max-tier label, and the tier of the Agents of any namespace
	// without one.
	DefaultMaxTier string
	// DisableNetworkPolicies skips creating NetworkPolicies for UserDeployments and Agents.
	DisableNetworkPolicies bool
	// WatchNamespaces are the namespaces whose UserDeployments are
	// reconciled; empty means all namespaces.
	WatchNamespaces manager.Namespaces
	// NamespacePrefix makes user namespaces <prefix>-<userId>.
	NamespacePrefix string
	// TierConfig is the tier file; empty uses the built-in tiers.
	TierConfig string
	// IngressEntryPoint is the Traefik entry point of IngressRoutes.
	IngressEntryPoint string
	// CertResolver is the Traefik certificate resolver of IngressRoutes.
	CertResolver string
	// PublicIngressClass and InternalIngressClass select the ingress
	// controller per visibility.
	PublicIngressClass   string
	InternalIngressClass string
	// IngressControllerNamespace is where the ingress controller runs; the
	// NetworkPolicies admit traffic from it.
	IngressControllerNamespace string
	// ReservedHosts are the first host labels no app may take.
	ReservedHosts manager.Labels

	tiers tiers.Config
}

// AddFlags registers the deployments flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DeploymentDomain, "deployment-domain", "",
		"Required. Parent DNS domain of deployed apps' hosts, e.g. apps.example.com.")
	fs.StringVar(&o.ClusterSecretStore, "cluster-secret-store", "default",
		"Name of the ClusterSecretStore that deployment secrets are read from.")
	fs.StringVar(&o.SecretKeyPrefix, "secret-key-prefix", render.DefaultSecretKeyPrefix,
		"Prefix put before every remote secret key, {userId} replaced with the deployment's spec.userId; a key that could leave it is refused. Must contain {userId} followed by '/' or '_'.")
	fs.StringVar(&o.DefaultMaxTier, "default-max-tier", "free",
		"Most generous tier a UserDeployment in a namespace bound to its user (label "+labelkeys.Tenant+
			") may ask for when the namespace has no "+labelkeys.MaxTier+" label; unbound namespaces (the platform backend's) may ask for any. "+
			"Also the tier of the Agents of every namespace without that label.")
	fs.BoolVar(&o.DisableNetworkPolicies, "disable-network-policies", false,
		"Do not create NetworkPolicies for UserDeployments and Agents.")
	fs.StringVar(&o.NamespacePrefix, "namespace-prefix", "user",
		"Prefix of user namespaces: <prefix>-<userId>.")
	fs.StringVar(&o.TierConfig, "tier-config", "",
		"YAML file of resource tiers (quota, container defaults and maximums, maximum replicas); empty uses the built-in free, pro and enterprise tiers.")
	fs.StringVar(&o.IngressEntryPoint, "ingress-entrypoint", "websecure",
		"Traefik entry point of IngressRoutes.")
	fs.StringVar(&o.CertResolver, "cert-resolver", "letsencrypt",
		"Traefik certificate resolver for the IngressRoutes' TLS; empty uses Traefik's default certificate.")
	fs.StringVar(&o.PublicIngressClass, "public-ingress-class", "public",
		"Ingress class of public hosts (Ingress fallback and IngressRoute annotation); empty uses the cluster default.")
	fs.StringVar(&o.InternalIngressClass, "internal-ingress-class", "internal",
		"Ingress class of internal hosts (<name>.int.<domain>).")
	fs.StringVar(&o.IngressControllerNamespace, "ingress-controller-namespace", "traefik",
		"Namespace of the ingress controller's pods; the NetworkPolicies admit traffic from it.")
	o.ReservedHosts = slices.Clone(DefaultReservedHosts)
	fs.Var(&o.ReservedHosts, "reserved-hosts",
		"Comma-separated first host labels no app may take: a UserDeployment whose host (<name>.<domain>, <name>-<service>.<domain>) "+
			"begins with one is refused (HostReserved). Empty reserves none.")
	manager.AddWatchNamespaceFlag(fs, &o.WatchNamespaces,
		"Comma-separated namespaces whose UserDeployments are reconciled; empty means all namespaces.")
	manager.BindEnvs(fs,
		"deployment-domain", "cluster-secret-store", "secret-key-prefix", "default-max-tier", "disable-network-policies", "namespace-prefix",
		"tier-config", "ingress-entrypoint", "cert-resolver", "public-ingress-class",
		"internal-ingress-class", "ingress-controller-namespace", "reserved-hosts")
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
	if err := render.CheckSecretKeyPrefix(o.SecretKeyPrefix); err != nil {
		errs = append(errs, fmt.Errorf("--secret-key-prefix: %w", err))
	}
	// A user id has at most 40 characters; the namespace must stay a DNS label.
	if msgs := validation.IsDNS1123Label(o.NamespacePrefix); len(msgs) > 0 || len(o.NamespacePrefix) > 22 {
		errs = append(errs, fmt.Errorf("--namespace-prefix: invalid prefix %q: a DNS label of at most 22 characters is required", o.NamespacePrefix))
	}
	if o.IngressEntryPoint == "" {
		errs = append(errs, errors.New("--ingress-entrypoint must not be empty"))
	}
	for flag, v := range map[string]string{"--ingress-controller-namespace": o.IngressControllerNamespace,
		"--public-ingress-class": o.PublicIngressClass, "--internal-ingress-class": o.InternalIngressClass} {
		if msgs := validation.IsDNS1123Subdomain(v); v != "" && len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: invalid name %q: %s", flag, v, strings.Join(msgs, "; ")))
		}
	}
	t, err := tiers.Load(o.TierConfig)
	if err != nil {
		errs = append(errs, fmt.Errorf("--tier-config: %w", err))
	}
	o.tiers = t
	if _, ok := t[o.DefaultMaxTier]; err == nil && !ok {
		errs = append(errs, fmt.Errorf("--default-max-tier: unknown tier %q (known: %s)", o.DefaultMaxTier, strings.Join(t.Names(), ", ")))
	}
	return errors.Join(errs...)
}

// Config is the controller configuration the options describe.
func (o *Options) Config() Config {
	return Config{
		Options: render.Options{
			Domain:                     o.DeploymentDomain,
			ClusterSecretStore:         o.ClusterSecretStore,
			SecretKeyPrefix:            o.SecretKeyPrefix,
			IngressEntryPoint:          o.IngressEntryPoint,
			CertResolver:               o.CertResolver,
			PublicIngressClass:         o.PublicIngressClass,
			InternalIngressClass:       o.InternalIngressClass,
			IngressControllerNamespace: o.IngressControllerNamespace,
			NetworkPolicies:            !o.DisableNetworkPolicies,
		},
		NamespacePrefix: o.NamespacePrefix,
		Tiers:           o.tiers,
		DefaultMaxTier:  o.DefaultMaxTier,
		ReservedHosts:   o.ReservedHosts,
	}
}

// NewComponent declares the deployments manager for manager.NewCommand: its
// flags, their validation and its controllers. Each call has options of its own.
func NewComponent() manager.Component { return component(&Options{}) }

func component(o *Options) manager.Component {
	return manager.Component{
		Name:             "deployments",
		LeaderElectionID: "deployments.scheduler.opsnorth.io",
		Short:            "Run the manager that reconciles UserDeployments from DeploymentTemplates, and OSSA Agents",
		AddFlags:         o.AddFlags,
		Validate:         o.Validate,
		Namespaces:       func() manager.Namespaces { return o.WatchNamespaces },
		// Agents (ossa.ai/v1), for the Agent controller's events and client.
		AddToScheme: []func(*runtime.Scheme) error{ossav1.AddToScheme},
		LogValues: func() []any {
			return []any{
				"deploymentDomain", o.DeploymentDomain,
				"clusterSecretStore", o.ClusterSecretStore,
				"secretKeyPrefix", o.SecretKeyPrefix,
				"disableNetworkPolicies", o.DisableNetworkPolicies,
				"namespacePrefix", o.NamespacePrefix,
				"tierConfig", o.TierConfig,
				"defaultMaxTier", o.DefaultMaxTier,
				"reservedHosts", o.ReservedHosts.String(),
			}
		},
		Setup: manager.SetupWith(func() (Config, error) { return o.Config(), nil }, Setup),
	}
}
