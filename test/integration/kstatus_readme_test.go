package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/repo"
)

// TestWhatToolsSeeDocumented: the README's table of what each tool sees is
// TestWhatToolsSee's cases.
func TestWhatToolsSeeDocumented(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(data), toolsTable(), "README's table of what tools see; want:\n%s", toolsTable())
}

// toolsTable renders phaseCases as a Markdown table.
func toolsTable() string {
	var b strings.Builder
	b.WriteString("| Kind | Phase | kstatus | `kubectl wait --for=condition=` matches |\n| --- | --- | --- | --- |\n")
	for _, tc := range phaseCases {
		met := "none"
		if len(tc.met) > 0 {
			met = "`" + strings.Join(tc.met, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", tc.kind, tc.phase, tc.kstatus, met)
	}
	return b.String()
}
