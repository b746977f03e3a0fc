package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
)

// peer is a project whose CRDs run beside ours on users' clusters, with the
// names kubectl resolves for its kinds (read from its CRDs at the commit in
// source).
type peer struct {
	name       string
	shortNames []string
	categories []string
	// names are its plural or singular names that ours meet; shares says how.
	names  []string
	shares string
	source string
}

// peers is the README's table of the names our short names and categories
// must not take.
var peers = []peer{
	{name: "Argo Workflows", shortNames: []string{"wf", "cwf", "cronwf", "wftmpl", "cwft", "clusterwftmpl", "wfeb", "wfts", "wfat"},
		names:  []string{"workflows"},
		shares: "plural `workflows` (`workflows.argoproj.io`); `wf` was our Workflow's short name",
		source: "`argoproj/argo-workflows@f016ad8` `manifests/base/crds/full/`"},
	{name: "Argo Events", shortNames: []string{"eb", "es", "sn"},
		source: "`argoproj/argo-events@6478ece` `manifests/base/crds/`"},
	{name: "Argo CD", shortNames: []string{"app", "apps", "appset", "appsets", "appproj", "appprojs"},
		source: "`argoproj/argo-cd@37ee009` `manifests/crds/`"},
	{name: "Tekton Pipelines", shortNames: []string{"pr", "prs", "tr", "trs"}, categories: []string{"tekton", "tekton-pipelines"},
		source: "`tektoncd/pipeline@3ee1745` `config/300-crds/`"},
	{name: "kagent", shortNames: []string{"ahr", "mc", "mprov", "rmcps", "ts"}, categories: []string{"kagent"},
		names:  []string{"agents"},
		shares: "plural `agents` (`agents.kagent.dev`, which has no short name)",
		source: "`kagent-dev/kagent@5229184` `go/api/config/crd/bases/`"},
	{name: "KServe", shortNames: []string{"isvc", "ig", "tm", "llmisvc"},
		source: "`kserve/kserve@aaac4e2` `charts/kserve-crd-minimal/templates/`, `charts/kserve-llmisvc-crd-minimal/templates/`"},
	{name: "Knative Serving", shortNames: []string{"kservice", "ksvc", "config", "cfg", "rev", "rt", "dm", "kpa", "pa"},
		categories: []string{"all", "knative", "serving", "knative-internal", "autoscaling"},
		source:     "`knative/serving@98e5ef9` `config/core/300-resources/`"},
	{name: "Knative Eventing", shortNames: []string{"ch", "imc", "rr", "sub"},
		categories: []string{"all", "knative", "eventing", "messaging", "channel", "sources", "flows", "bindings", "sink"},
		source:     "`knative/eventing@8cf4c4b` `config/core/resources/`, `config/channels/in-memory-channel/resources/`"},
	{name: "Kueue", shortNames: []string{"ac", "cq", "co", "lq", "queue", "queues", "rf", "flavor", "flavors", "mkc", "mkconf", "prc", "topo", "wpc", "kwl", "kueueworkload", "kueueworkloads"},
		source: "`kubernetes-sigs/kueue@ff69552` `config/components/crd/bases/`"},
	{name: "Flux", shortNames: []string{"gitrepo", "helmrepo", "hc", "ocirepo", "ea", "ks", "hr", "imgrepo", "imagerepo", "imgpol", "imagepol", "iua", "imgupd", "imgauto"},
		categories: []string{"all", "fluxcd", "fluxcd-sources", "fluxcd-appliers", "fluxcd-notifications", "fluxcd-images"},
		source: "`fluxcd/source-controller@39b711b`, `kustomize-controller@186fb3b`, `helm-controller@0f61a86`, `notification-controller@2e46958`, " +
			"`image-reflector-controller@debe2aa`, `image-automation-controller@d36e2ea`, each `config/crd/bases/`"},
	{name: "cert-manager", shortNames: []string{"cert", "certs", "cr", "crs", "iss", "ciss"}, categories: []string{"cert-manager", "cert-manager-acme"},
		source: "`cert-manager/cert-manager@2d0d7f7` `deploy/crds/`"},
	{name: "OpenShift", shortNames: []string{"co", "ctrcfg", "idms", "itms", "mc", "mcp", "mhc", "mhcs"}, categories: []string{"coreoperators"},
		names:  []string{"scheduler"},
		shares: "singular `scheduler` of `schedulers.config.openshift.io`, our old category",
		source: "`openshift/api@2a3d739` `*/zz_generated.crd-manifests/`"},
}

// ourGroups are the API groups of the suite.
var ourGroups = []string{schedulerv1alpha1.SchemeGroupVersion.Group, ossav1.SchemeGroupVersion.Group}

// TestNamesDocumented: the README shows the peers' names and ours as the
// code and the CRDs have them.
func TestNamesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	readme := string(data)
	assert.Contains(t, readme, peersTable(), "README's table of the peers' names; want:\n%s", peersTable())
	ours := oursTable(ourCRDs(t))
	assert.Contains(t, readme, ours, "README's table of our names; want:\n%s", ours)
}

// TestNamesDoNotCollide: no short name or category of ours is a name
// kubectl resolves for a peer's kind, or for a kind the API server serves
// (built-in and third-party CRDs). kubectl expands a category before it
// looks up resource names (cli-runtime's Builder.ReplaceAliases), so a
// category must not be another kind's name either.
func TestNamesDoNotCollide(t *testing.T) {
	taken := map[string]string{}
	for _, p := range peers {
		for _, n := range slices.Concat(p.shortNames, p.categories, p.names) {
			taken[n] = p.name
		}
	}
	crds := ourCRDs(t)
	for _, crd := range crds {
		for _, n := range slices.Concat(crd.Spec.Names.ShortNames, crd.Spec.Names.Categories) {
			peer, ok := taken[n]
			assert.False(t, ok, "%s: %q is %s's", crd.Name, n, peer)
		}
	}

	env := testenv.Require(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	_, lists, err := dc.ServerGroupsAndResources()
	require.NoError(t, err)
	served := map[string]string{}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		require.NoError(t, err)
		if slices.Contains(ourGroups, gv.Group) {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}.String()
			for _, n := range slices.Concat([]string{r.Name, r.SingularName}, r.ShortNames, r.Categories) {
				served[n] = gr
			}
		}
	}
	require.Contains(t, served, "all", "discovery lists the built-in category all")
	for _, crd := range crds {
		for _, n := range slices.Concat(crd.Spec.Names.ShortNames, crd.Spec.Names.Categories) {
			gr, ok := served[n]
			assert.False(t, ok, "%s: %q is a name of %s", crd.Name, n, gr)
		}
	}
}

// ourCRDs are the suite's CRDs as manifests/crd has them.
func ourCRDs(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "manifests", "crd")
	files, err := filepath.Glob(filepath.Join(dir, "*_*.yaml"))
	require.NoError(t, err)
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.Unmarshal(data, crd), f)
		out = append(out, crd)
	}
	require.Len(t, out, 5, "the CRDs of manifests/crd")
	return out
}

func peersTable() string {
	var b strings.Builder
	b.WriteString("| Peer | Short names | Categories | Shares with ours | Checked in |\n| --- | --- | --- | --- | --- |\n")
	for _, p := range peers {
		shares := p.shares
		if shares == "" {
			shares = "nothing"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", p.name, codeList(p.shortNames), codeList(p.categories), shares, p.source)
	}
	return b.String()
}

func oursTable(crds []*apiextensionsv1.CustomResourceDefinition) string {
	var b strings.Builder
	b.WriteString("| Kind | Resource | Short names | Categories |\n| --- | --- | --- | --- |\n")
	for _, crd := range crds {
		n := crd.Spec.Names
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", n.Kind, crd.Name, codeList(n.ShortNames), codeList(n.Categories))
	}
	return b.String()
}

// codeList is names as a Markdown list of code spans, or "none".
func codeList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}
