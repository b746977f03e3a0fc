package tasks

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refusedEnvNamesTable is the README's table of RefusedEnvNames.
func refusedEnvNamesTable() string {
	var b strings.Builder
	b.WriteString("| Class | Refused (any letter case; `*` any suffix) | Why |\n| --- | --- | --- |\n")
	for _, c := range RefusedEnvNames {
		var names []string
		for _, p := range c.Prefixes {
			names = append(names, "`"+p+"*`")
		}
		for _, n := range c.Names {
			names = append(names, "`"+n+"`")
		}
		b.WriteString("| " + c.Class + " | " + strings.Join(names, ", ") + " | " + c.Why + " |\n")
	}
	return b.String()
}

// TestRefusedEnvNamesDocumented: the README lists every refused name.
func TestRefusedEnvNamesDocumented(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assert.Contains(t, string(data), refusedEnvNamesTable(), "README's refused environment names; want:\n%s", refusedEnvNamesTable())
}
