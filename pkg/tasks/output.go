package tasks

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// ResultKey is the output key that holds a termination message that is not a
// JSON object of strings.
const ResultKey = "result"

// ParseOutput turns the agent's termination message into the task's output:
// a JSON object whose values are all strings is taken as is; any other
// non-blank text (plain text, malformed JSON, JSON of another shape) is kept
// whole under ResultKey; a blank message means no output. It never fails, so
// output can never stand in the way of recording a terminal phase.
func ParseOutput(message string) map[string]string {
	text := strings.TrimSpace(message)
	if text == "" {
		return nil
	}
	if strings.HasPrefix(text, "{") {
		if obj, ok := stringObject(text); ok {
			return obj
		}
	}
	return map[string]string{ResultKey: text}
}

// stringObject decodes text as a JSON object whose values are all strings
// (null is not a string). An empty object decodes to nil.
func stringObject(text string) (map[string]string, bool) {
	var obj map[string]*string
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return nil, false
	}
	var out map[string]string
	for k, v := range obj {
		if v == nil {
			return nil, false
		}
		if out == nil {
			out = make(map[string]string, len(obj))
		}
		out[k] = *v
	}
	return out, true
}

// truncatedCondition says the output may have been cut by the kubelet, and
// how many bytes of the message it kept.
func truncatedCondition(gen int64, kept int) metav1.Condition {
	return metav1.Condition{Type: v1alpha1.ConditionOutputTruncated, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonOutputTruncated, ObservedGeneration: gen,
		Message: fmt.Sprintf("output is the %d bytes the kubelet kept of the agent's termination message: it keeps only the last %d; "+
			"return larger results by reference (a URL or object key in the output)",
			kept, v1alpha1.MaxTerminationMessageBytes)}
}
