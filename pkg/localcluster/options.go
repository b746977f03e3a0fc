package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"opsnorth.io/scheduler/pkg/repo"
)

// RepoRoot finds the repository root (see repo.Root).
func RepoRoot() (string, error) { return repo.Root() }

// BinaryDir runs `scripts/controlplane.sh build all` in the repository at
// root, which builds whatever binary is missing (minutes, once per machine)
// and prints the directory holding them all.
func BinaryDir(root string) (string, error) {
	cmd := exec.Command(filepath.Join(root, "scripts", "controlplane.sh"), "build", "all")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("build control plane (scripts/controlplane.sh build all): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// stateDir returns dir, created if missing, or a new temporary directory.
// An existing dir must be empty: Stop removes it.
func stateDir(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "opsnorth-localcluster-")
		if err != nil {
			return "", fmt.Errorf("create cluster dir: %w", err)
		}
		return d, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read cluster dir: %w", err)
	}
	if len(entries) > 0 {
		return "", fmt.Errorf("cluster dir %s is not empty (Stop removes it, so it must hold nothing else)", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create cluster dir: %w", err)
	}
	return filepath.Abs(dir)
}

func withDefaults(opts Options) (Options, error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 10 * time.Second
	}
	if opts.BinDir != "" && opts.StagesDir != "" {
		return opts, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return opts, err
	}
	if opts.StagesDir == "" {
		opts.StagesDir = filepath.Join(root, "scripts", "kwok-stages")
	}
	if opts.BinDir == "" {
		if opts.BinDir, err = BinaryDir(root); err != nil {
			return opts, err
		}
	}
	return opts, nil
}
