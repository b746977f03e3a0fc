package testenv

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// Shared is the control plane of the current test package, set by RunMain.
var Shared *Env

// RunMain starts one control plane for the package's tests, runs them and
// stops it. Call it from TestMain: `func TestMain(m *testing.M) { testenv.RunMain(m) }`.
// With -short it runs the tests without a control plane; integration tests
// then skip themselves through Require.
func RunMain(m *testing.M, opts ...Option) {
	os.Exit(runMain(m, opts))
}

func runMain(m *testing.M, opts []Option) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	env, err := Start(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	Shared = env
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		}
	}()
	return m.Run()
}

// Require returns the shared control plane, or skips the test under -short.
func Require(t testing.TB) *Env {
	t.Helper()
	if Shared == nil {
		t.Skip("integration test: needs the control plane (run without -short)")
	}
	return Shared
}
