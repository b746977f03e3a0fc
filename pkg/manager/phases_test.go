package manager

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunPhases(t *testing.T) {
	boom := errors.New("boom")
	// step returns a phase that records its name and ends as told.
	step := func(name string, done bool, err error) Phase[*[]string] {
		return func(_ context.Context, ran *[]string) (bool, error) {
			*ran = append(*ran, name)
			return done, err
		}
	}
	tests := []struct {
		name    string
		phases  []Phase[*[]string]
		wantRan []string
		wantErr error
	}{
		{name: "all in order", phases: []Phase[*[]string]{step("a", false, nil), step("b", false, nil), step("c", false, nil)},
			wantRan: []string{"a", "b", "c"}},
		{name: "done ends the checklist", phases: []Phase[*[]string]{step("a", false, nil), step("b", true, nil), step("c", false, nil)},
			wantRan: []string{"a", "b"}},
		{name: "an error ends it and is returned", phases: []Phase[*[]string]{step("a", false, boom), step("b", false, nil)},
			wantRan: []string{"a"}, wantErr: boom},
		{name: "none", wantRan: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			err := RunPhases(t.Context(), &ran, tt.phases...)
			assert.Equal(t, tt.wantRan, ran)
			assert.Equal(t, tt.wantErr, err)
		})
	}
}
