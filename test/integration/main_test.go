// Package integration runs the API and the manager binaries against a real
// kube-apiserver started by pkg/testenv.
package integration

import (
	"testing"

	"opsnorth.io/scheduler/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.RunMain(m) }
