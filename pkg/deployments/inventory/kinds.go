package inventory

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// Kind is a namespaced kind the API serves that can be listed and deleted
// (what the namespace controller deletes with a namespace).
type Kind struct {
	GVK      schema.GroupVersionKind
	Resource string
}

// String is "resource.group", as RBAC names it.
func (k Kind) String() string {
	if k.GVK.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.GVK.Group
}

// records are kinds that say what happened or what a Service reaches,
// derived by the cluster, never someone's data: they do not keep a namespace.
var records = map[schema.GroupKind]bool{
	{Kind: "Event"}:                         true,
	{Group: "events.k8s.io", Kind: "Event"}: true,
	{Kind: "Endpoints"}:                     true,
}

// Kinds discovers the namespaced kinds the API serves, and keeps the last
// discovery for callers that accept it.
type Kinds struct {
	Discovery discovery.DiscoveryInterface
	Now       func() time.Time

	mu    sync.Mutex
	at    time.Time
	kinds []Kind
}

// Get returns the kinds, from the last discovery if it is younger than
// maxAge. A group whose discovery failed fails the call, naming the group:
// what it serves may be someone's data.
func (k *Kinds) Get(maxAge time.Duration) ([]Kind, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kinds != nil && k.Now().Sub(k.at) < maxAge {
		return k.kinds, nil
	}
	lists, err := k.Discovery.ServerPreferredNamespacedResources()
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if errors.As(err, &failed) {
			var groups []string
			for gv, e := range failed.Groups {
				groups = append(groups, gv.String()+": "+e.Error())
			}
			slices.Sort(groups)
			return nil, fmt.Errorf("discover the kinds the API serves: %s", strings.Join(groups, "; "))
		}
		return nil, fmt.Errorf("discover the kinds the API serves: %w", err)
	}
	var out []Kind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, fmt.Errorf("discovery: %w", err)
		}
		for _, r := range l.APIResources {
			gvk := gv.WithKind(r.Kind)
			if strings.Contains(r.Name, "/") || records[gvk.GroupKind()] ||
				!slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			out = append(out, Kind{GVK: gvk, Resource: r.Name})
		}
	}
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.String(), b.String()) })
	k.kinds, k.at = out, k.Now()
	return out, nil
}
