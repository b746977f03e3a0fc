package deployments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/testkit"
)

var deploymentEnv = []string{"DEPLOYMENT_DOMAIN", "CLUSTER_SECRET_STORE", "SECRET_KEY_PREFIX", "DEFAULT_MAX_TIER", "DISABLE_NETWORK_POLICIES", "WATCH_NAMESPACE",
	"NAMESPACE_PREFIX", "TIER_CONFIG", "INGRESS_ENTRYPOINT", "CERT_RESOLVER", "PUBLIC_INGRESS_CLASS",
	"INTERNAL_INGRESS_CLASS", "INGRESS_CONTROLLER_NAMESPACE", "RESERVED_HOSTS"}

// defaults fills the options a case does not set with their defaults.
func defaults(o Options) Options {
	set := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	set(&o.SecretKeyPrefix, "users/{userId}/")
	set(&o.DefaultMaxTier, "free")
	set(&o.NamespacePrefix, "user")
	set(&o.IngressEntryPoint, "websecure")
	set(&o.CertResolver, "letsencrypt")
	set(&o.PublicIngressClass, "public")
	set(&o.InternalIngressClass, "internal")
	set(&o.IngressControllerNamespace, "traefik")
	if o.ReservedHosts == nil {
		o.ReservedHosts = manager.Labels(DefaultReservedHosts)
	}
	if o.tiers == nil {
		o.tiers = tiers.Defaults()
	}
	return o
}

// run executes the deployments command with a captured run function and
// returns the component passed to it (nil if run was not called).
func run(t *testing.T, env map[string]string, args ...string) (*Options, *manager.Component, error) {
	t.Helper()
	testkit.UnsetEnv(t, deploymentEnv...)
	for k, v := range env {
		t.Setenv(k, v)
	}
	o := &Options{}
	got, err := testkit.ParseCommand(t, component(o), args...)
	return o, got, err
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want Options
	}{
		{name: "defaults with required domain", args: []string{"--deployment-domain=apps.example.com"},
			want: Options{DeploymentDomain: "apps.example.com", ClusterSecretStore: "default"}},
		{name: "env fallback",
			env: map[string]string{"DEPLOYMENT_DOMAIN": "apps.env.com", "CLUSTER_SECRET_STORE": "vault",
				"DISABLE_NETWORK_POLICIES": "true", "WATCH_NAMESPACE": "team-a,team-b"},
			want: Options{DeploymentDomain: "apps.env.com", ClusterSecretStore: "vault",
				DisableNetworkPolicies: true, WatchNamespaces: manager.Namespaces{"team-a", "team-b"}}},
		{name: "flags win over env",
			env: map[string]string{"DEPLOYMENT_DOMAIN": "apps.env.com", "CLUSTER_SECRET_STORE": "vault",
				"DISABLE_NETWORK_POLICIES": "true", "WATCH_NAMESPACE": "team-a"},
			args: []string{"--deployment-domain=apps.flag.com", "--cluster-secret-store=aws",
				"--disable-network-policies=false", "--watch-namespace=team-c"},
			want: Options{DeploymentDomain: "apps.flag.com", ClusterSecretStore: "aws",
				WatchNamespaces: manager.Namespaces{"team-c"}}},
		{name: "deployment flags",
			env: map[string]string{"NAMESPACE_PREFIX": "tenant", "CERT_RESOLVER": "acme"},
			args: []string{"--deployment-domain=a.b", "--ingress-entrypoint=web", "--public-ingress-class=pub",
				"--internal-ingress-class=int", "--ingress-controller-namespace=ingress"},
			want: Options{DeploymentDomain: "a.b", ClusterSecretStore: "default", NamespacePrefix: "tenant",
				CertResolver: "acme", IngressEntryPoint: "web", PublicIngressClass: "pub", InternalIngressClass: "int",
				IngressControllerNamespace: "ingress"}},
		{name: "secret key prefix from env", env: map[string]string{"SECRET_KEY_PREFIX": "/tenants/{userId}/"},
			args: []string{"--deployment-domain=a.b"},
			want: Options{DeploymentDomain: "a.b", ClusterSecretStore: "default", SecretKeyPrefix: "/tenants/{userId}/"}},
		{name: "secret key prefix flag wins", env: map[string]string{"SECRET_KEY_PREFIX": "/tenants/{userId}/"},
			args: []string{"--deployment-domain=a.b", "--secret-key-prefix=kv/{userId}_"},
			want: Options{DeploymentDomain: "a.b", ClusterSecretStore: "default", SecretKeyPrefix: "kv/{userId}_"}},
		{name: "reserved hosts from env", env: map[string]string{"RESERVED_HOSTS": "www, shop,www"},
			args: []string{"--deployment-domain=a.b"},
			want: Options{DeploymentDomain: "a.b", ClusterSecretStore: "default", ReservedHosts: manager.Labels{"www", "shop"}}},
		{name: "empty reserved hosts env reserves none", env: map[string]string{"RESERVED_HOSTS": ""},
			args: []string{"--deployment-domain=a.b"},
			want: Options{DeploymentDomain: "a.b", ClusterSecretStore: "default", ReservedHosts: manager.Labels{}}},
		{name: "reserved hosts flag wins", env: map[string]string{"RESERVED_HOSTS": "www"},
			args: []string{"--deployment-domain=a.b", "--reserved-hosts=shop"},
			want: Options{DeploymentDomain: "a.b", ClusterSecretStore: "default", ReservedHosts: manager.Labels{"shop"}}},
		{name: "empty bool env is unset", env: map[string]string{"DISABLE_NETWORK_POLICIES": ""},
			args: []string{"--deployment-domain=apps.example.com"},
			want: Options{DeploymentDomain: "apps.example.com", ClusterSecretStore: "default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, got, err := run(t, tt.env, tt.args...)
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, defaults(tt.want), *o)
			assert.Equal(t, tt.want.WatchNamespaces, got.Namespaces())
		})
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{name: "missing domain", want: []string{"--deployment-domain is required (or set DEPLOYMENT_DOMAIN)"}},
		{name: "invalid domain", args: []string{"--deployment-domain=Apps_Example"},
			want: []string{`--deployment-domain: invalid domain "Apps_Example"`}},
		{name: "empty secret store", args: []string{"--deployment-domain=apps.example.com", "--cluster-secret-store="},
			want: []string{`--cluster-secret-store: invalid name ""`}},
		{name: "invalid bool env", env: map[string]string{"DISABLE_NETWORK_POLICIES": "maybe", "DEPLOYMENT_DOMAIN": "a.b"},
			want: []string{`invalid value "maybe" for DISABLE_NETWORK_POLICIES (--disable-network-policies)`}},
		{name: "invalid watch namespace", args: []string{"--deployment-domain=a.b", "--watch-namespace=Bad"},
			want: []string{`"--watch-namespace"`, `invalid namespace "Bad"`}},
		{name: "empty secret key prefix", args: []string{"--deployment-domain=a.b", "--secret-key-prefix="},
			want: []string{"--secret-key-prefix: must not be empty"}},
		{name: "empty secret key prefix env", env: map[string]string{"SECRET_KEY_PREFIX": "", "DEPLOYMENT_DOMAIN": "a.b"},
			want: []string{"--secret-key-prefix: must not be empty"}},
		{name: "secret key prefix without user", args: []string{"--deployment-domain=a.b", "--secret-key-prefix=shared/"},
			want: []string{`--secret-key-prefix: "shared/" must contain {userId}`}},
		{name: "secret key prefix open after user", args: []string{"--deployment-domain=a.b", "--secret-key-prefix=users/{userId}"},
			want: []string{`--secret-key-prefix: "users/{userId}": {userId} must be followed by '/' or '_'`}},
		{name: "secret key prefix escaping", args: []string{"--deployment-domain=a.b", "--secret-key-prefix=../{userId}/"},
			want: []string{`--secret-key-prefix: "../{userId}/": a ".." path segment`}},
		{name: "unknown default max tier", args: []string{"--deployment-domain=a.b", "--default-max-tier=gold"},
			want: []string{`--default-max-tier: unknown tier "gold" (known: enterprise, free, pro)`}},
		{name: "bad prefix", args: []string{"--deployment-domain=a.b", "--namespace-prefix=Users"},
			want: []string{`--namespace-prefix: invalid prefix "Users"`}},
		{name: "long prefix", args: []string{"--deployment-domain=a.b", "--namespace-prefix=abcdefghijklmnopqrstuvw"},
			want: []string{"at most 22 characters"}},
		{name: "missing tier file", args: []string{"--deployment-domain=a.b", "--tier-config=/nonexistent/tiers.yaml"},
			want: []string{"--tier-config: read tier config"}},
		{name: "bad ingress namespace", args: []string{"--deployment-domain=a.b", "--ingress-controller-namespace=Bad_NS", "--ingress-entrypoint="},
			want: []string{`--ingress-controller-namespace: invalid name "Bad_NS"`, "--ingress-entrypoint must not be empty"}},
		{name: "reserved host not a label", args: []string{"--deployment-domain=a.b", "--reserved-hosts=www,Bad_Label"},
			want: []string{`"--reserved-hosts"`, `invalid label "Bad_Label"`}},
		{name: "component and common errors together", args: []string{"--kube-api-qps=0"},
			want: []string{"--deployment-domain is required", "--kube-api-qps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := run(t, tt.env, tt.args...)
			require.Error(t, err)
			for _, want := range tt.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.Nil(t, got, "run must not be called")
		})
	}
}

func TestComponent(t *testing.T) {
	o := &Options{DeploymentDomain: "apps.example.com", ClusterSecretStore: "vault"}
	c := component(o)
	assert.Equal(t, "deployments", c.Name)
	assert.Equal(t, "deployments.scheduler.opsnorth.io", c.LeaderElectionID)
	assert.Equal(t, "opsnorth-scheduler-deployments", c.FieldOwner())
	assert.Equal(t, []any{"deploymentDomain", "apps.example.com", "clusterSecretStore", "vault", "secretKeyPrefix", "",
		"disableNetworkPolicies", false, "namespacePrefix", "", "tierConfig", "", "defaultMaxTier", "", "reservedHosts", ""}, c.LogValues())
	require.NotNil(t, c.Setup)

	o.NamespacePrefix, o.SecretKeyPrefix, o.tiers = "user", "kv/{userId}/", tiers.Defaults()
	o.DefaultMaxTier, o.ReservedHosts = "pro", manager.Labels{"www"}
	cfg := o.Config()
	assert.Equal(t, []string{"www"}, cfg.ReservedHosts)
	assert.Equal(t, "kv/{userId}/", cfg.SecretKeyPrefix)
	assert.Equal(t, "pro", cfg.DefaultMaxTier)
	assert.Equal(t, "user", cfg.NamespacePrefix)
	assert.True(t, cfg.NetworkPolicies)
	assert.Equal(t, "vault", cfg.ClusterSecretStore)
}

func TestHelp(t *testing.T) {
	help := testkit.HelpText(t, NewComponent())
	for _, want := range []string{
		"--deployment-domain", "(env DEPLOYMENT_DOMAIN)",
		"--cluster-secret-store", "(env CLUSTER_SECRET_STORE)", `(default "default")`,
		"--secret-key-prefix", "(env SECRET_KEY_PREFIX)", `(default "users/{userId}/")`,
		"--default-max-tier", "(env DEFAULT_MAX_TIER)", `(default "free")`,
		"--disable-network-policies", "(env DISABLE_NETWORK_POLICIES)",
		"--watch-namespace", "(env WATCH_NAMESPACE)",
		"--namespace-prefix", "(env NAMESPACE_PREFIX)", "--tier-config", "(env TIER_CONFIG)",
		"--ingress-entrypoint", "--cert-resolver", "--public-ingress-class", "--internal-ingress-class",
		"--ingress-controller-namespace", "(env INGRESS_CONTROLLER_NAMESPACE)",
		"--reserved-hosts", "(env RESERVED_HOSTS)", "(default account,accounts,admin,",
		"--metrics-bind-address", "(env MAX_CONCURRENT_RECONCILES)",
	} {
		assert.Contains(t, help, want)
	}
}
