package workflows

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestTaskName(t *testing.T) {
	long := strings.Repeat("w", 120)
	dotted := "team.pipeline-" + strings.Repeat("x", 60)
	tests := []struct {
		workflow, step string
		attempt        int32
		want           string
	}{
		{workflow: "build", step: "compile", attempt: 0, want: "build-compile-"},
		{workflow: "build", step: "compile", attempt: 10, want: "build-compile-"},
		{workflow: long, step: "s", attempt: 3, want: strings.Repeat("w", 52)},
		{workflow: dotted, step: "step", attempt: 1, want: "team-pipeline-"},
		{workflow: "a-b", step: "c", want: "a-b-c-"},
		{workflow: "a", step: "b-c", want: "a-b-c-"},
		{workflow: strings.Repeat("w", 53), step: "s", want: strings.Repeat("w", 52)},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := TaskName(tt.workflow, tt.step, tt.attempt)
		assert.Empty(t, validation.IsDNS1123Label(got), got)
		assert.LessOrEqual(t, len(got), 63)
		assert.True(t, strings.HasPrefix(got, tt.want), "%s has prefix %s", got, tt.want)
		assert.True(t, strings.HasSuffix(got, "-"+strconv.Itoa(int(tt.attempt))), got)
		assert.Equal(t, got, TaskName(tt.workflow, tt.step, tt.attempt), "deterministic")
		assert.False(t, seen[got], "unique: %s", got)
		seen[got] = true
	}
}

func TestLabelValue(t *testing.T) {
	assert.Equal(t, "short.name", labelValue("short.name"))
	got := labelValue(strings.Repeat("a", 50) + "." + strings.Repeat("b", 100))
	assert.Empty(t, validation.IsValidLabelValue(got), got)
	assert.Len(t, got, 63)
	assert.NotEqual(t, got, labelValue(strings.Repeat("a", 50)+"."+strings.Repeat("b", 101)))
}
