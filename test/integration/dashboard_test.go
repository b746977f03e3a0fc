package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/testenv"
)

// TestGrafanaDashboardQueriesExistingMetrics keeps the dashboard honest: it
// is valid JSON and every opsnorth_ metric its queries use is one a manager
// defines, so renaming a metric breaks this test rather than a user's graph.
func TestGrafanaDashboardQueriesExistingMetrics(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "manifests", "grafana", "opsnorth-scheduler.json"))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	require.NotEmpty(t, dash.Panels)

	defined := definedMetrics(t, filepath.Join(root, "pkg"))
	metric := regexp.MustCompile(`opsnorth_[a-z_]+`)
	used := 0
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, target := range p.Targets {
			for _, name := range metric.FindAllString(target.Expr, -1) {
				name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
				assert.Contains(t, defined, name, "panel %q queries an undefined metric", p.Title)
				used++
			}
		}
	}
	assert.Positive(t, used)
}

// definedMetrics collects the quoted opsnorth_ metric names in the
// non-test Go files under dir.
func definedMetrics(t *testing.T, dir string) map[string]bool {
	t.Helper()
	quoted := regexp.MustCompile(`"(opsnorth_[a-z_]+)"`)
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range quoted.FindAllStringSubmatch(string(src), -1) {
			out[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}
