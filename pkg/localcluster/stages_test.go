package localcluster

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// stagesDir is the repository's kwok stages, the ones every local cluster runs.
const stagesDir = "../../scripts/kwok-stages"

// stageDelays parses the multi-document output of loadStages into name → default delay (ms; -1 without).
func stageDelays(t *testing.T, data []byte) map[string]int64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stages.yaml")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	docs, err := readDocuments(path)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, doc := range docs {
		var s struct {
			Metadata struct{ Name string }
			Spec     struct {
				Delay *struct {
					DurationMilliseconds int64 `json:"durationMilliseconds"`
				}
			}
		}
		require.NoError(t, yaml.Unmarshal(doc, &s))
		out[s.Metadata.Name] = -1
		if s.Spec.Delay != nil {
			out[s.Metadata.Name] = s.Spec.Delay.DurationMilliseconds
		}
	}
	return out
}

func TestLoadStages(t *testing.T) {
	tests := []struct {
		name     string
		podDelay time.Duration
		want     map[string]int64
	}{
		{"stage defaults", 0, map[string]int64{
			"node-initialize": -1, "node-heartbeat-with-lease": 600000,
			"pod-start": 0, "pod-image-pull-backoff": 1000, "pod-exit": 1000,
			"pod-restart-backoff": 1000, "pod-restart": 0, "pod-delete": -1,
		}},
		{"pod delay replaces the default run time only", 2500 * time.Millisecond, map[string]int64{
			"node-initialize": -1, "node-heartbeat-with-lease": 600000,
			"pod-start": 0, "pod-image-pull-backoff": 1000, "pod-exit": 2500,
			"pod-restart-backoff": 1000, "pod-restart": 0, "pod-delete": -1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := loadStages(stagesDir, tt.podDelay)
			require.NoError(t, err)
			assert.Equal(t, tt.want, stageDelays(t, data))
		})
	}
}

func TestLoadStagesRefuses(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{"empty dir", nil, "no kwok stages"},
		{"not a stage", map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"}, "want a kwok.x-k8s.io/v1alpha1 Stage"},
		{"marked without delay", map[string]string{"a.yaml": "apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata:\n  name: s\n  annotations: {localcluster.opsnorth.io/pod-delay: default}\nspec: {}\n"}, "has no spec.delay"},
		{"bad yaml", map[string]string{"a.yaml": "apiVersion: [\n"}, "parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
			}
			_, err := loadStages(dir, time.Second)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestStateDirRefusesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "precious"), nil, 0o600))
	_, err := stateDir(dir)
	require.ErrorContains(t, err, "not empty")

	fresh := filepath.Join(t.TempDir(), "new")
	got, err := stateDir(fresh)
	require.NoError(t, err)
	assert.Equal(t, fresh, got)
	assert.DirExists(t, fresh)
}
