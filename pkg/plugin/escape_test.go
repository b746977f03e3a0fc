package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestEscapeText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"\x1b[2J\x1b[Hall clear", `\x1b[2J\x1b[Hall clear`},
		{"approved\rdenied", `approved\rdenied`},
		{"line\nnext\ttab", `line\nnext\ttab`},
		{"bell\a del\x7f c1\u0085", `bell\a del\x7f c1\u0085`},
		{"admin\u202egnp.exe", `admin\u202egnp.exe`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		t.Run(tt.in, func(t *testing.T) { assert.Equal(t, tt.want, escapeText(tt.in)) })
	}
}

// TestGetEscapesAgentText: what an agent wrote (its message, output keys
// and values) reaches the terminal escaped, colours of our own still work,
// and the stored object is untouched.
func TestGetEscapesAgentText(t *testing.T) {
	k := newCluster(t, "get-escape")
	task := testkit.MakeAgentTask("hostile", "").Obj()
	task.Status = v1alpha1.AgentTaskStatus{
		Phase: v1alpha1.TaskFailed, Reason: "Error", Message: "failed\x1b[2J\x1b[1;1Hall tasks succeeded\r",
		Output:     map[string]string{"key\x1b]0;title\a": "v"},
		Conditions: []metav1.Condition{condition(v1alpha1.ConditionReady, metav1.ConditionFalse, "Error", "agent said \x1b[32mOK")},
	}
	k.createTask(task)
	for _, args := range [][]string{{"get", "task", "hostile"}, {"get", "task", "hostile", "--color=always"}} {
		r := k.in(t).run(args...)
		assert.NoError(t, r.err)
		out := sgr.ReplaceAllString(r.text(), "") // our own colours
		assert.NotContains(t, out, "\x1b", "%v", args)
		assert.NotContains(t, out, "\r", "%v", args)
		assert.NotContains(t, out, "\a", "%v", args)
		assert.Contains(t, out, `failed\x1b[2J\x1b[1;1Hall tasks succeeded\r`, "%v", args)
		assert.Contains(t, out, `key\x1b]0;title\a`, "%v", args)
	}
	stored, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(t.Context(), "hostile", metav1.GetOptions{})
	assert.NoError(t, err)
	assert.Equal(t, "failed\x1b[2J\x1b[1;1Hall tasks succeeded\r", stored.Status.Message)
}
