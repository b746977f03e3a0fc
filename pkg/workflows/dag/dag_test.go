package dag

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func steps(spec ...[]string) []Step {
	out := make([]Step, len(spec))
	for i, s := range spec {
		out[i] = Step{Name: s[0], DependsOn: s[1:]}
	}
	return out
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name     string
		steps    []Step
		wantDeps [][]int
		wantErr  string
	}{
		{name: "sequential", steps: steps([]string{"a"}, []string{"b"}, []string{"c"}), wantDeps: [][]int{nil, {0}, {1}}},
		{name: "single", steps: steps([]string{"a"}), wantDeps: [][]int{nil}},
		{
			name:     "diamond",
			steps:    steps([]string{"a"}, []string{"b", "a"}, []string{"c", "a"}, []string{"d", "c", "b", "b"}),
			wantDeps: [][]int{nil, {0}, {0}, {1, 2}},
		},
		{name: "dag roots without dependsOn", steps: steps([]string{"a"}, []string{"b"}, []string{"c", "a"}), wantDeps: [][]int{nil, nil, {0}}},
		{name: "forward reference", steps: steps([]string{"a", "b"}, []string{"b"}), wantDeps: [][]int{{1}, nil}},
		{name: "duplicate", steps: steps([]string{"a"}, []string{"a"}), wantErr: `duplicate step name "a"`},
		{name: "unknown", steps: steps([]string{"a", "x"}), wantErr: `step "a" depends on unknown step "x"`},
		{name: "self", steps: steps([]string{"a", "a"}), wantErr: `step "a" depends on itself`},
		{
			name:    "cycle",
			steps:   steps([]string{"a"}, []string{"b", "a", "d"}, []string{"c", "b"}, []string{"d", "c"}, []string{"e", "d"}),
			wantErr: "dependsOn forms a cycle through steps b, c, d, e",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Build(tt.steps)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalid)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, len(tt.steps), g.Len())
			for i, want := range tt.wantDeps {
				assert.Equal(t, want, g.Deps(i), "deps of %s", g.Name(i))
			}
		})
	}
}

func TestAncestorsAndRunnable(t *testing.T) {
	g, err := Build(steps([]string{"a"}, []string{"b", "a"}, []string{"c", "a"}, []string{"d", "b", "c"}, []string{"e"}))
	require.NoError(t, err)
	assert.True(t, g.IsAncestor(3, 0))
	assert.True(t, g.IsAncestor(3, 2))
	assert.False(t, g.IsAncestor(1, 2))
	assert.False(t, g.IsAncestor(0, 3))
	assert.False(t, g.IsAncestor(3, 4))
	assert.False(t, g.IsAncestor(3, 3))
	assert.False(t, g.IsAncestor(3, 7))
	i, ok := g.Index("d")
	assert.True(t, ok)
	assert.Equal(t, 3, i)

	tests := []struct {
		name               string
		started, succeeded []bool
		want               []int
	}{
		{name: "start", started: make([]bool, 5), succeeded: make([]bool, 5), want: []int{0, 4}},
		{name: "branches", started: []bool{true, false, false, false, true}, succeeded: []bool{true, false, false, false, false}, want: []int{1, 2}},
		{name: "join waits", started: []bool{true, true, true, false, true}, succeeded: []bool{true, true, false, false, true}, want: nil},
		{name: "join", started: []bool{true, true, true, false, true}, succeeded: []bool{true, true, true, false, true}, want: []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, g.Runnable(tt.started, tt.succeeded))
		})
	}
}
