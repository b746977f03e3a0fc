//go:build chaos

package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// summary collects every figure the drills measure, by drill, for
// _output/chaos/summary.json.
var summary = struct {
	sync.Mutex
	Drills map[string]map[string]any `json:"drills"`
}{Drills: map[string]map[string]any{}}

// record logs a figure of drill and keeps it for the summary.
func record(t *testing.T, drill, key string, value any) {
	t.Helper()
	t.Logf("FIGURE %s %s = %+v", drill, key, value)
	summary.Lock()
	defer summary.Unlock()
	if summary.Drills[drill] == nil {
		summary.Drills[drill] = map[string]any{}
	}
	summary.Drills[drill][key] = value
}

func writeSummary(path string) error {
	summary.Lock()
	defer summary.Unlock()
	if len(summary.Drills) == 0 {
		return nil
	}
	data, err := json.MarshalIndent(summary.Drills, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	fmt.Printf("chaos: figures (also in %s):\n%s\n", path, data)
	return nil
}
