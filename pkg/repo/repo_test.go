package repo

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRootFromASubdirectory(t *testing.T) {
	root, err := Root()
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(root, "go.mod"))
	assert.DirExists(t, filepath.Join(root, "apis", "scheduler", "v1alpha1"))
}

func TestRootOutsideTheRepository(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Root()
	require.ErrorContains(t, err, "repository root not found")
}
