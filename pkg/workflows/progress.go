package workflows

import (
	"strconv"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// progress is status.progress for steps: how many are done (succeeded, or
// skipped at an approval timeout: what lets the steps after them run) over
// how many there are, e.g. "3/5".
func progress(steps []v1alpha1.StepStatus) string {
	n := 0
	for _, s := range steps {
		if done(s) {
			n++
		}
	}
	return strconv.Itoa(n) + "/" + strconv.Itoa(len(steps))
}
