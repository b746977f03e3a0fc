package helm

import (
	"errors"
	"fmt"
	"io"
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
func values(t *testing.T, set ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, s := range set {
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

// rendered is the chart's output for one set of values.
type rendered struct {
	objs     []*unstructured.Unstructured
	manifest string
	notes    string
}

// renderChart renders the chart as `helm template --include-crds` does (the
// values schema applies), and returns an error where Helm refuses.
func renderChart(ch *chartv2.Chart, vals map[string]any) (*rendered, error) {
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = releaseName
	install.Namespace = "default"
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
	if len(r.Hooks) > 0 {
		return nil, fmt.Errorf("the chart has %d hooks; it should have none", len(r.Hooks))
	}
	objs, err := decode(r.Manifest)
	if err != nil {
		return nil, err
	}
	return &rendered{objs: objs, manifest: r.Manifest, notes: r.Info.Notes}, nil
}

// render renders the chart with the given --set assignments and fails the
// test if Helm refuses.
func render(t *testing.T, set ...string) *rendered {
	t.Helper()
	out, err := renderChart(loadChart(t), values(t, set...))
	require.NoError(t, err, "render with %v", set)
	return out
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

// renderKustomize is `kustomize build dir`, as objects.
func renderKustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	doc, err := resMap.AsYaml()
	require.NoError(t, err)
	objs, err := decode(string(doc))
	require.NoError(t, err)
	return objs
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
