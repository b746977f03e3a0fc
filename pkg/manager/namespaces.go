package manager

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

const namespacesType = "namespaces"

// Namespaces is a pflag.Value holding a comma-separated list of namespaces.
// An empty list means all namespaces. Set trims spaces, drops empty items and
// duplicates, and rejects names that are not valid namespace names.
type Namespaces []string

// ParseNamespaces parses a comma-separated list of namespaces.
func ParseNamespaces(s string) (Namespaces, error) {
	var out Namespaces
	for item := range strings.SplitSeq(s, ",") {
		ns := strings.TrimSpace(item)
		if ns == "" || slices.Contains(out, ns) {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("invalid namespace %q: %s", ns, strings.Join(errs, "; "))
		}
		out = append(out, ns)
	}
	return out, nil
}

// Set implements pflag.Value.
func (n *Namespaces) Set(s string) error {
	parsed, err := ParseNamespaces(s)
	if err != nil {
		return err
	}
	*n = parsed
	return nil
}

// String implements pflag.Value.
func (n *Namespaces) String() string { return strings.Join(*n, ",") }

// Type implements pflag.Value.
func (n *Namespaces) Type() string { return namespacesType }

// All reports whether the list selects all namespaces.
func (n Namespaces) All() bool { return len(n) == 0 }

// describe returns the list for logs: "all" when empty.
func (n Namespaces) describe() string {
	if n.All() {
		return "all"
	}
	return strings.Join(n, ",")
}
