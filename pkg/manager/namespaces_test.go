package manager

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fakescheduler "opsnorth.io/scheduler/generated/clientset/versioned/fake"
)

func TestParseNamespaces(t *testing.T) {
	tests := []struct {
		in      string
		want    Namespaces
		wantErr string
	}{
		{in: "", want: nil},
		{in: " , ,", want: nil},
		{in: "agent-tasks", want: Namespaces{"agent-tasks"}},
		{in: " a , b,a,", want: Namespaces{"a", "b"}},
		{in: "ok,Bad_NS", wantErr: `invalid namespace "Bad_NS"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseNamespaces(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, len(tt.want) == 0, got.All())
		})
	}
}

func TestNamespacesValue(t *testing.T) {
	n := Namespaces{"default"}
	require.NoError(t, n.Set("x,y"))
	assert.Equal(t, "x,y", n.String())
	assert.Equal(t, "x,y", n.describe())

	require.NoError(t, n.Set(""))
	assert.Equal(t, "all", n.describe())

	require.Error(t, n.Set("UPPER"))
	assert.True(t, n.All(), "a failed Set leaves the value unchanged")
}

// TestSchedulerInformersNamespaces: controllers building informers of their
// own read the watched namespaces from the scheduler informers.
func TestSchedulerInformersNamespaces(t *testing.T) {
	cs := fakescheduler.NewClientset()
	all := newSchedulerInformers(cs, nil)
	assert.Empty(t, all.Namespaces())
	assert.Len(t, all.Factories(), 1)
	assert.Equal(t, []string{""}, slices.Collect(maps.Keys(all.ByNamespace())), "one factory for all namespaces")

	two := newSchedulerInformers(cs, Namespaces{"a", "b"})
	assert.Equal(t, []string{"a", "b"}, two.Namespaces())
	assert.Len(t, two.Factories(), 2)
	assert.NotNil(t, two.For("a"))
	assert.Nil(t, two.For("c"))
	byNamespace := two.ByNamespace()
	assert.Equal(t, []string{"a", "b"}, slices.Sorted(maps.Keys(byNamespace)))
	assert.Same(t, two.For("b"), byNamespace["b"])
}
