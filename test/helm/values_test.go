package helm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValuesRefused: values the schema (or, where a schema cannot say it,
// the templates) refuse, so `helm install` fails before anything is applied.
// Each error names the offending key.
func TestValuesRefused(t *testing.T) {
	cases := []struct {
		set  []string
		want string // in the error
	}{
		{[]string{"managers.tasks.image.pullPolicy=Sometimes"}, "/managers/tasks/image/pullPolicy"},
		{[]string{"managers.tasks.image.repository="}, "/managers/tasks/image/repository"},
		{[]string{"managers.tasks.replicas=-1"}, "/managers/tasks/replicas"},
		{[]string{"managers.tasks.replicas=two"}, "/managers/tasks/replicas"},
		{[]string{"managers.tasks.replicas=1.5"}, "/managers/tasks/replicas"},
		{[]string{"managers.deployments.maxConcurrentReconciles=0"}, "/managers/deployments/maxConcurrentReconciles"},
		{[]string{"managers.workflows.kubeAPI.qps=0"}, "/managers/workflows/kubeAPI/qps"},
		{[]string{"managers.workflows.kubeAPI.qps=12.5"}, "/managers/workflows/kubeAPI/qps"}, // --set makes it a string: --set-json it
		{[]string{"managers.workflows.kubeAPI.burst=0"}, "/managers/workflows/kubeAPI/burst"},
		{[]string{"managers.tasks.leaderElection.leaseDuration=15"}, "/managers/tasks/leaderElection/leaseDuration"},
		{[]string{"managers.tasks.leaderElection.retryPeriod=half a second"}, "/managers/tasks/leaderElection/retryPeriod"},
		{[]string{"managers.tasks.leaderElection.enabled=yes"}, "/managers/tasks/leaderElection/enabled"},
		{[]string{"managers.tasks.replica=3"}, "replica"},
		{[]string{"managers.tasks.deploymentDomain=apps.example.com"}, "deploymentDomain"},
		{[]string{"managers.scheduler.enabled=true"}, "scheduler"},
		{[]string{"replicas=3"}, "replicas"},
		{[]string{"crds.install=yes"}, "/crds/install"},
		{[]string{"crds.keeps=true"}, "keeps"},
		{[]string{"namespaces.system=Opsnorth_System"}, "namespaces.system (Opsnorth_System) is no longer a value"},
		{[]string{"namespaces.tasks="}, "/namespaces/tasks"},
		{[]string{"managers.deployments.deploymentDomain=Apps.Example.com"}, "/managers/deployments/deploymentDomain"},
		{[]string{"managers.tasks.image.digest=sha256:abc"}, "/managers/tasks/image/digest"},
		{[]string{"managers.tasks.image.digest=latest"}, "/managers/tasks/image/digest"},
		{[]string{"managers.tasks.image.registry=https://registry.example.com"}, "/managers/tasks/image/registry"},
		{[]string{"managers.tasks.image.tag=v1:2"}, "/managers/tasks/image/tag"},
		{[]string{"podSecurityContext=strict"}, "/podSecurityContext"},
		{[]string{"tests.timeout=soon"}, "/tests/timeout"},
		{[]string{"tests.enable=false"}, "enable"},
		{[]string{"managers.deployments.deploymentDomain=https://apps.example.com"}, "/managers/deployments/deploymentDomain"},
		{[]string{"managers.deployments.clusterSecretStore="}, "/managers/deployments/clusterSecretStore"},
		{[]string{"managers.deployments.reservedHosts={Www}"}, "/managers/deployments/reservedHosts/0"},
		{[]string{"managers.deployments.reservedHosts={www.example}"}, "/managers/deployments/reservedHosts/0"},
		{[]string{"managers.deployments.reservedHosts=www"}, "/managers/deployments/reservedHosts"},
		{[]string{"managers.tasks.env[0].name=X", "managers.tasks.env[0].value=5"}, "/managers/tasks/env/0/value"},
		{[]string{"managers.tasks.env[0].value=x"}, "/managers/tasks/env/0"},
		{[]string{"managers.tasks.args={webhook-timeout=5s}"}, "/managers/tasks/args/0"},
		{[]string{"managers.tasks.args=--webhook-timeout=5s"}, "/managers/tasks/args"},
		{[]string{"managers.tasks.resources.limits.memory=lots"}, "/managers/tasks/resources/limits/memory"},
		{[]string{"managers.tasks.resources.limit.memory=1Gi"}, "limit"},
		{[]string{"managers.tasks.gogc=0"}, "/managers/tasks/gogc"},
		{[]string{"managers.tasks.gogc=sometimes"}, "/managers/tasks/gogc"},
		{[]string{"managers.tasks.podDisruptionBudget.minAvailable=half"}, "/managers/tasks/podDisruptionBudget/minAvailable"},
		{[]string{"managers.tasks.terminationGracePeriodSeconds=-1"}, "/managers/tasks/terminationGracePeriodSeconds"},
		{[]string{"managers.tasks.nodeSelector.pool=1"}, "/managers/tasks/nodeSelector/pool"},
		{[]string{"managers.tasks.podDefaults.runtimeClass=gvisor"}, "runtimeClass"},
		{[]string{"managers.tasks.podDefaults.enforce=always"}, "/managers/tasks/podDefaults/enforce"},
		{[]string{"taskNetworkPolicy.extraExcept={not-a-cidr}"}, "/taskNetworkPolicy/extraExcept/0"},
		{[]string{"monitoring.serviceMonitor.interval=soon"}, "/monitoring/serviceMonitor/interval"},
		{[]string{"monitoring.serviceMonitor.enabled=1"}, "/monitoring/serviceMonitor/enabled"},
		{[]string{"imagePullSecrets[0].secret=x"}, "/imagePullSecrets/0"},
		// What the templates refuse.
		{[]string{"namespaces.tasks=opsnorth-system"}, "namespaces.tasks (opsnorth-system) must differ from the release namespace"},
		{[]string{"namespaces.system=ops"}, "namespaces.system (ops) is no longer a value: the managers install into the release namespace (opsnorth-system). Install with `helm install -n ops --create-namespace`"},
		{[]string{"managers.deployments.deploymentDomain="}, "managers.deployments.deploymentDomain is required"},
		{[]string{"managers.tasks.leaderElection.enabled=false"}, "managers.tasks: 2 replicas need leaderElection.enabled"},
	}
	ch := loadChart(t)
	for _, tc := range cases {
		t.Run(strings.Join(tc.set, ","), func(t *testing.T) {
			_, err := renderChart(ch, values(t, tc.set...))
			require.Error(t, err, "helm accepted %v", tc.set)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestValuesAccepted: the other spellings the schema allows render.
func TestValuesAccepted(t *testing.T) {
	for _, set := range [][]string{
		{"managers.tasks.podDisruptionBudget.minAvailable=50%"},
		{"managers.tasks.gogc=200"},
		{"managers.tasks.resources.limits.cpu=2", "managers.tasks.resources.requests.memory=1e9"},
		{"managers.tasks.replicas=0"},
		{"json:managers.tasks.kubeAPI.qps=12.5"},
		{"managers.tasks.env[0].name=X", "managers.tasks.env[0].valueFrom.secretKeyRef.name=s", "managers.tasks.env[0].valueFrom.secretKeyRef.key=k"},
		{"managers.tasks.leaderElection.leaseDuration=1m30s"},
		{"global.imageRegistry=example.com"},
		{"namespaces.system=opsnorth-system"}, // an old values file naming the release namespace
		{"managers.deployments.enabled=false", "managers.deployments.deploymentDomain="},
		{"managers.tasks.image.registry=localhost:5000"},
	} {
		t.Run(strings.Join(set, ","), func(t *testing.T) {
			render(t, set...)
		})
	}
}

// TestDeploymentDomainRequired: the chart has no default domain (apps of a
// real cluster on example.com hosts would be a silent misconfiguration); a
// plain install fails, naming the value to set, and the schema says so.
func TestDeploymentDomainRequired(t *testing.T) {
	const want = "managers.deployments.deploymentDomain is required: the parent DNS domain of the apps' hosts (<name>.<domain>, <name>.int.<domain>). " +
		"Set it, e.g. --set managers.deployments.deploymentDomain=apps.example.com"
	ch := loadChart(t)
	_, err := renderChart(ch, map[string]any{}) // `helm install` without values
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)

	out := render(t, "managers.deployments.enabled=false", "managers.deployments.deploymentDomain=")
	assert.Len(t, out.ofKind("Deployment"), 2, "without the deployments manager no domain is needed")

	var schema struct {
		Properties struct {
			Managers struct {
				Properties struct {
					Deployments struct {
						Properties map[string]struct {
							Description string `json:"description"`
						} `json:"properties"`
					} `json:"deployments"`
				} `json:"properties"`
			} `json:"managers"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(ch.Schema, &schema))
	assert.Contains(t, schema.Properties.Managers.Properties.Deployments.Properties["deploymentDomain"].Description,
		"Required while managers.deployments.enabled")
	assert.Empty(t, ch.Values["managers"].(map[string]any)["deployments"].(map[string]any)["deploymentDomain"], "no default domain")
}

// TestReleaseNamespaceRefused: the managers go into the release namespace,
// so the chart refuses namespaces they cannot work in, naming -n.
func TestReleaseNamespaceRefused(t *testing.T) {
	ch := loadChart(t)
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		t.Run(ns, func(t *testing.T) {
			_, err := renderChartIn(ch, values(t), ns)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the release namespace is \""+ns+"\"")
			assert.Contains(t, err.Error(), "helm install -n opsnorth-system --create-namespace")
		})
	}
	_, err := renderChartIn(ch, values(t), "agent-tasks")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "namespaces.tasks (agent-tasks) must differ from the release namespace")
}
