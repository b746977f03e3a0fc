// Package repo locates the repository checkout that tests, the local cluster
// and the tools run from.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Root finds the repository root: the nearest parent of the working
// directory holding the opsnorth.io/scheduler go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module opsnorth.io/scheduler\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found: no parent holds the opsnorth.io/scheduler go.mod")
		}
		dir = parent
	}
}
