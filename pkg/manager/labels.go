package manager

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

const labelsType = "labels"

// Labels is a pflag.Value holding a comma-separated list of DNS labels, such
// as host names' first labels. Set trims spaces and drops empty items and
// duplicates; an empty environment variable sets the list empty (applyEnv).
type Labels []string

// Set implements pflag.Value.
func (l *Labels) Set(s string) error {
	out := Labels{}
	for item := range strings.SplitSeq(s, ",") {
		label := strings.TrimSpace(item)
		if label == "" || slices.Contains(out, label) {
			continue
		}
		if errs := validation.IsDNS1123Label(label); len(errs) > 0 {
			return fmt.Errorf("invalid label %q: %s", label, strings.Join(errs, "; "))
		}
		out = append(out, label)
	}
	*l = out
	return nil
}

// String implements pflag.Value.
func (l *Labels) String() string { return strings.Join(*l, ",") }

// Type implements pflag.Value.
func (l *Labels) Type() string { return labelsType }
