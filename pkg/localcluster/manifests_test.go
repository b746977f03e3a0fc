package localcluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManifestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.yaml", "a.yaml", "kustomization.yaml", "notes.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	sub := filepath.Join(dir, "only-kustomize")
	require.NoError(t, os.Mkdir(sub, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "kustomization.yaml"), nil, 0o600))

	got, err := ManifestFiles(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")}, got)

	_, err = ManifestFiles(filepath.Join(dir, "*.json"))
	require.ErrorContains(t, err, "no manifest files match")
	_, err = ManifestFiles(filepath.Join(sub, "*.yaml"))
	require.ErrorContains(t, err, "no manifest files match")
}
