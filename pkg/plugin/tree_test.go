package plugin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// TestStepTree lays out steps without a cluster: flat in list order
// without dependsOn, a tree under the last dependency otherwise, and steps
// a cycle keeps out of the tree at the end.
func TestStepTree(t *testing.T) {
	tests := []struct {
		name  string
		steps []v1alpha1.WorkflowStep
		want  []string
	}{
		{name: "sequential", steps: []v1alpha1.WorkflowStep{agentStep("a"), agentStep("b"), agentStep("c")},
			want: []string{"a", "b", "c"}},
		{name: "diamond", steps: []v1alpha1.WorkflowStep{agentStep("a"), agentStep("b", "a"), agentStep("c", "a"), agentStep("d", "c", "b")},
			want: []string{"a", "|-b", "`-c", "  `-d +b"}},
		{name: "cycle", steps: []v1alpha1.WorkflowStep{agentStep("a"), agentStep("b", "c"), agentStep("c", "b")},
			want: []string{"a", "b +c", "c +b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range stepTree(tt.steps, style{}.branches()) {
				line := l.prefix + tt.steps[l.step].Name
				if len(l.alsoOn) > 0 {
					line += " +" + strings.Join(l.alsoOn, ",")
				}
				got = append(got, line)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTruncate(t *testing.T) {
	assert.Equal(t, "short", style{}.truncate("short", 10))
	assert.Equal(t, "first line...", style{}.truncate("first line\nsecond", 20), "a multi-line message shows its first line")
	assert.Equal(t, "abcdefg...", style{}.truncate("abcdefghijklmnop", 10))
	assert.Equal(t, "abcdefghi…", style{fancy: true}.truncate("abcdefghijklmnop", 10))
}
