package inventory

import (
	"fmt"
	"strings"
)

// maxNamed bounds how many objects a message names; the rest are counted.
const maxNamed = 12

// Describe names objects, each root with what it owns, for a status
// message and an Event: "ConfigMap notes, Pod db-0 (owner of ConfigMap
// db-config, PersistentVolumeClaim db-data)".
func Describe(roots []Root) string {
	var parts []string
	named, total := 0, 0
	for _, r := range roots {
		total += 1 + len(r.Owns)
		if named >= maxNamed {
			continue
		}
		s := Name(r.Object)
		named++
		var owns []string
		for _, o := range r.Owns {
			if named >= maxNamed {
				break
			}
			owns = append(owns, Name(o))
			named++
		}
		if len(owns) > 0 {
			s += " (owner of " + strings.Join(owns, ", ") + ")"
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, ", ")
	if total > named {
		out += fmt.Sprintf(" and %d more", total-named)
	}
	return out
}

// Names names objects, at most maxNamed of them.
func Names(objs []Object) string {
	roots := make([]Root, len(objs))
	for i, o := range objs {
		roots[i] = Root{Object: o}
	}
	return Describe(roots)
}

// Name is "Kind name".
func Name(o Object) string { return o.GVK.Kind + " " + o.Meta.Name }
