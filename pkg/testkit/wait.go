package testkit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// WaitFor polls get until done holds for what it returned, within timeout,
// and returns that.
func WaitFor[T any](t *testing.T, timeout time.Duration, get func() T, done func(T) bool, msgAndArgs ...any) T {
	t.Helper()
	var last T
	require.Eventually(t, func() bool {
		last = get()
		return done(last)
	}, timeout, 20*time.Millisecond, msgAndArgs...)
	return last
}
