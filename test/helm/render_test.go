package helm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const releaseName = "opsnorth-scheduler"

// releaseNamespace is the namespace the tests install the release into, as
// the README does (helm install -n opsnorth-system --create-namespace): the
// managers' namespace.
const releaseNamespace = "opsnorth-system"

// testDomain is the deploymentDomain every render sets unless it sets its
// own: the chart has no default.
const testDomain = "managers.deployments.deploymentDomain=apps.example.com"

// loadChart loads the chart from its directory, as `helm install <dir>` does.
func loadChart(t *testing.T) *chartv2.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	require.NoError(t, err, "load %s", chartDir)
	return ch
}

// values parses --set style assignments ("a.b=c") into values, as the helm
// CLI does; one prefixed "json:" is a --set-json one ("json:a.b=12.5"), for
// what --set cannot spell (it reads 12.5 as a string).
// testDomain comes first, so an assignment of the test's own wins.
func values(t *testing.T, set ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, s := range append([]string{testDomain}, set...) {
		if j, ok := strings.CutPrefix(s, "json:"); ok {
			require.NoError(t, strvals.ParseJSON(j, vals), "--set-json %s", j)
			continue
		}
		require.NoError(t, strvals.ParseInto(s, vals), "--set %s", s)
	}
	return vals
}

// kubeVersion is the Kubernetes version the chart is rendered for: the
// control plane's (scripts/controlplane.sh). Without it Helm's SDK assumes
// the client-go of its own tests, v1.20, which the chart's kubeVersion
// refuses.
var kubeVersion = func() *common.KubeVersion {
	v, err := common.ParseKubeVersion("v1.37.2")
	if err != nil {
		panic(err)
	}
	return v
}()

// rendered is the chart's output for one set of values: the release's
// objects, and apart from them its hooks (the helm test's).
type rendered struct {
	objs     []*unstructured.Unstructured
	hooks    []*unstructured.Unstructured
	manifest string
	notes    string
}

// renderChart renders the chart into releaseNamespace; see renderChartIn.
func renderChart(ch *chartv2.Chart, vals map[string]any) (*rendered, error) {
	return renderChartIn(ch, vals, releaseNamespace)
}

// renderChartIn renders the chart as `helm template -n namespace
// --include-crds` does (the values schema applies), and returns an error
// where Helm refuses.
func renderChartIn(ch *chartv2.Chart, vals map[string]any, namespace string) (*rendered, error) {
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.Replace = true
	install.IncludeCRDs = true
	install.KubeVersion = kubeVersion
	rel, err := install.Run(ch, vals)
	if err != nil {
		return nil, err
	}
	r, ok := rel.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("release of type %T", rel)
	}
	objs, err := decode(r.Manifest)
	if err != nil {
		return nil, err
	}
	out := &rendered{objs: objs, manifest: r.Manifest, notes: r.Info.Notes}
	for _, h := range r.Hooks {
		hook, err := decode(h.Manifest)
		if err != nil {
			return nil, fmt.Errorf("hook %s: %w", h.Path, err)
		}
		out.hooks = append(out.hooks, hook...)
	}
	return out, nil
}

// render renders the chart into releaseNamespace with the given --set
// assignments and fails the test if Helm refuses.
func render(t *testing.T, set ...string) *rendered {
	t.Helper()
	return renderIn(t, releaseNamespace, set...)
}

// renderIn is render into another release namespace.
func renderIn(t *testing.T, namespace string, set ...string) *rendered {
	t.Helper()
	out, err := renderChartIn(loadChart(t), values(t, set...), namespace)
	require.NoError(t, err, "render into %s with %v", namespace, set)
	return out
}

// all is the release's objects and its hooks.
func (r *rendered) all() []*unstructured.Unstructured {
	return append(slices.Clone(r.objs), r.hooks...)
}

// decode splits a multi-document YAML stream into objects, skipping empty
// documents.
func decode(manifest string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode the rendered chart: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// renderKustomize is `kustomize build dir`, as objects; with components, of
// an overlay of dir that adds them (paths from this module's directory), as
// a user's overlay adds kustomize/components/monitoring.
func renderKustomize(t *testing.T, dir string, components ...string) []*unstructured.Unstructured {
	t.Helper()
	if len(components) > 0 {
		dir = overlayWith(t, dir, components)
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	doc, err := resMap.AsYaml()
	require.NoError(t, err)
	objs, err := decode(string(doc))
	require.NoError(t, err)
	return objs
}

// overlayWith writes a kustomization that adds components to dir into a
// temporary directory (kustomize refuses absolute paths: the references are
// relative to it) and returns that directory.
func overlayWith(t *testing.T, dir string, components []string) string {
	t.Helper()
	tmp := t.TempDir()
	rel := func(p string) string {
		abs, err := filepath.Abs(p)
		require.NoError(t, err)
		r, err := filepath.Rel(tmp, abs)
		require.NoError(t, err)
		return r
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + rel(dir) + "\ncomponents:\n"
	for _, c := range components {
		k += "  - " + rel(c) + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k), 0o600))
	return tmp
}

// key names an object: Kind namespace/name.
func key(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// byKey indexes objects by key, failing on duplicates.
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := make(map[string]*unstructured.Unstructured, len(objs))
	for _, obj := range objs {
		k := key(obj)
		require.NotContains(t, out, k, "rendered twice")
		out[k] = obj
	}
	return out
}

// ofKind returns the objects of the given kind.
func (r *rendered) ofKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range r.objs {
		if obj.GetKind() == kind {
			out = append(out, obj)
		}
	}
	return out
}

// get returns the object of that kind, namespace and name, or nil.
func (r *rendered) get(kind, namespace, name string) *unstructured.Unstructured {
	for _, obj := range r.objs {
		if obj.GetKind() == kind && obj.GetNamespace() == namespace && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

// names returns the names of the objects of a kind.
func (r *rendered) names(kind string) []string {
	var out []string
	for _, obj := range r.ofKind(kind) {
		out = append(out, obj.GetName())
	}
	return out
}

// kinds counts the rendered objects by kind.
func (r *rendered) kinds() map[string]int {
	out := map[string]int{}
	for _, obj := range r.objs {
		out[obj.GetKind()]++
	}
	return out
}
