// Package tiers holds the resource tiers of user namespaces: each tier sets
// the namespace's ResourceQuota, the LimitRange defaults and maximums of its
// containers, and the most replicas a service may run. Tiers come from a YAML
// file (--tier-config) or the built-in free, pro and enterprise defaults. The
// file replaces the defaults entirely:
//
//	tiers:
//	  free:
//	    maxReplicas: 2
//	    quota: {requests.cpu: "1", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi, pods: "10"}
//	    defaultRequest: {cpu: 50m, memory: 64Mi}
//	    defaultLimit: {cpu: 250m, memory: 256Mi}
//	    max: {cpu: "1", memory: 1Gi}
//
// A user namespace is shared by the user's deployments, so it gets the most
// generous tier among them (the highest maxReplicas, then the first name).
package tiers

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Tier is the resource envelope of one user namespace.
type Tier struct {
	// Quota is the namespace's ResourceQuota hard limits.
	Quota corev1.ResourceList `json:"quota"`
	// DefaultRequest are container requests when a template leaves them out.
	DefaultRequest corev1.ResourceList `json:"defaultRequest,omitempty"`
	// DefaultLimit are container limits when a template leaves them out.
	DefaultLimit corev1.ResourceList `json:"defaultLimit,omitempty"`
	// Max are the largest requests and limits a container may set.
	Max corev1.ResourceList `json:"max,omitempty"`
	// MaxReplicas is the most pods one service may run (replicas or
	// autoscaling.maxReplicas).
	MaxReplicas int32 `json:"maxReplicas"`
}

// Config maps tier names to tiers.
type Config map[string]Tier

// file is the on-disk format: `tiers: {name: Tier}`.
type file struct {
	Tiers Config `json:"tiers"`
}

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// Defaults are the built-in tiers.
func Defaults() Config {
	return Config{
		"free": {
			Quota: list("requests.cpu", "1", "requests.memory", "1Gi", "limits.cpu", "2", "limits.memory", "2Gi",
				"pods", "10", "persistentvolumeclaims", "2", "requests.storage", "5Gi"),
			DefaultRequest: list("cpu", "50m", "memory", "64Mi"),
			DefaultLimit:   list("cpu", "250m", "memory", "256Mi"),
			Max:            list("cpu", "1", "memory", "1Gi"),
			MaxReplicas:    2,
		},
		"pro": {
			Quota: list("requests.cpu", "4", "requests.memory", "8Gi", "limits.cpu", "8", "limits.memory", "16Gi",
				"pods", "50", "persistentvolumeclaims", "10", "requests.storage", "100Gi"),
			DefaultRequest: list("cpu", "100m", "memory", "128Mi"),
			DefaultLimit:   list("cpu", "500m", "memory", "512Mi"),
			Max:            list("cpu", "4", "memory", "8Gi"),
			MaxReplicas:    10,
		},
		"enterprise": {
			Quota: list("requests.cpu", "32", "requests.memory", "64Gi", "limits.cpu", "64", "limits.memory", "128Gi",
				"pods", "500", "persistentvolumeclaims", "50", "requests.storage", "1Ti"),
			DefaultRequest: list("cpu", "100m", "memory", "128Mi"),
			DefaultLimit:   list("cpu", "1", "memory", "1Gi"),
			Max:            list("cpu", "16", "memory", "32Gi"),
			MaxReplicas:    100,
		},
	}
}

// Load reads tiers from path; an empty path returns the built-in defaults.
func Load(path string) (Config, error) {
	if path == "" {
		return Defaults(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tier config: %w", err)
	}
	return Parse(data)
}

// Parse decodes and validates a tier config file.
func Parse(data []byte) (Config, error) {
	var f file
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("parse tier config: %w", err)
	}
	if len(f.Tiers) == 0 {
		return nil, errors.New("tier config: no tiers")
	}
	var errs []error
	for _, name := range f.Tiers.Names() {
		if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("tier %q: invalid name: %s", name, strings.Join(msgs, "; ")))
		}
		if t := f.Tiers[name]; t.MaxReplicas < 1 {
			errs = append(errs, fmt.Errorf("tier %q: maxReplicas must be at least 1", name))
		} else if len(t.Quota) == 0 {
			errs = append(errs, fmt.Errorf("tier %q: quota is required", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("tier config: %w", err)
	}
	return f.Tiers, nil
}

// Names returns the tier names, sorted.
func (c Config) Names() []string {
	names := make([]string, 0, len(c))
	for name := range c {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Get returns the named tier, or an error listing the known tiers.
func (c Config) Get(name string) (Tier, error) {
	t, ok := c[name]
	if !ok {
		return Tier{}, fmt.Errorf("unknown tier %q (known: %s)", name, strings.Join(c.Names(), ", "))
	}
	return t, nil
}

// Allowed returns nil when a deployment may ask for tier asked where at most
// tier max is allowed: asked is max, or runs strictly fewer maxReplicas (the
// rank of tiers). Otherwise the error says why.
func (c Config) Allowed(asked, max string) error {
	a, okA := c[asked]
	m, okM := c[max]
	switch {
	case !okM:
		return fmt.Errorf("the most generous tier allowed, %q, is unknown (known: %s)", max, strings.Join(c.Names(), ", "))
	case asked == max:
		return nil
	case !okA:
		return fmt.Errorf("unknown tier %q (known: %s)", asked, strings.Join(c.Names(), ", "))
	case a.MaxReplicas < m.MaxReplicas:
		return nil
	}
	return fmt.Errorf("tier %q is above %q, the most generous tier allowed", asked, max)
}
