package tasks

import (
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
)

// TestCountError: an error is counted once, by its namespace and type,
// where countError sees it, however it was wrapped; building one counts
// nothing.
func TestCountError(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want map[string]float64
	}{
		{name: "typed", err: func() error { return errorf(errAPIRead, "get pod: %w", errors.New("boom")) },
			want: map[string]float64{errAPIRead: 1}},
		{name: "wrapped again", err: func() error {
			return fmt.Errorf("reconcile: %w", errorf(errStatusWrite, "apply status: %w", errors.New("conflict")))
		}, want: map[string]float64{errStatusWrite: 1}},
		{name: "untyped", err: func() error { return errors.New("other") }, want: map[string]float64{}},
		{name: "nil", err: func() error { return nil }, want: map[string]float64{}},
	}
	kinds := []string{errAPIRead, errStatusWrite, errJobCreate, errJobConflict}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			count := func() map[string]float64 {
				m := map[string]float64{}
				for _, k := range kinds {
					m[k] = testutil.ToFloat64(ErrorsTotal.WithLabelValues("errors-ns", k))
				}
				return m
			}
			before := count()
			err := tt.err()
			assert.Equal(t, before, count(), "building an error counts nothing")
			assert.Equal(t, err, countError("errors-ns", err), "countError returns its argument")
			after := count()
			for _, k := range kinds {
				assert.Equal(t, tt.want[k], after[k]-before[k], k)
				assert.Zero(t, testutil.ToFloat64(ErrorsTotal.WithLabelValues("other-ns", k)), "only the task's namespace")
			}
		})
	}
}
