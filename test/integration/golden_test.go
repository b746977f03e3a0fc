package integration

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// assertGolden compares got with the golden file testdata/<name>; with
// -update it writes got there instead. Review the diff of an update like code.
func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: go test ./test/integration/ -short -run '%s' -update", t.Name())
	assert.Equal(t, string(want), string(got),
		"%s differs from the output; if the change is intended, rerun with -update and review the diff", path)
}
