// Package inventory decides whether a namespace the deployments manager
// created holds nothing but the manager's own objects, so it may be deleted.
// Judge is pure: the manager lists every kind the API serves (Kinds) and
// hands over what it saw.
package inventory

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is one listed object's kind and metadata.
type Object struct {
	GVK  schema.GroupVersionKind
	Meta metav1.ObjectMeta
}

// Root is an object the manager did not create that keeps the namespace,
// with the objects in the namespace whose owner chains end at it.
type Root struct {
	Object
	Owns []Object
}

// Verdict is what Judge found.
type Verdict struct {
	// Foreign keep the namespace: objects not the manager's, by their roots.
	Foreign []Root
	// Claims are the manager's claims it keeps (storage.whenDeleted Retain).
	Claims []Object
	// Orphans are objects whose owners are all gone: garbage the garbage
	// collector removes. Worth a short wait, as an owner created while the
	// kinds were listed looks gone too.
	Orphans []Object
	// Pending are objects an owner of which is being deleted: collected
	// with it, or left when it goes with orphan propagation.
	Pending []Object
}

// Input is what Judge looks at.
type Input struct {
	// Objects are every object listed in the namespace.
	Objects []Object
	// Listed are the kinds listed in full: an owner of such a kind that is
	// not among Objects is gone.
	Listed map[schema.GroupKind]bool
	// Mine says whether an object without owners was made by the manager.
	Mine func(Object) bool
	// Deletable says whether one of the manager's claims is to go with its
	// app (any other claim is kept, whoever made it).
	Deletable func(Object) bool
	// Settled is set once orphans and pending objects had time to go:
	// orphans left then are garbage, except claims, which are kept, as are
	// pending objects.
	Settled bool
}

// class is where an object's owner chains end.
type class struct {
	kind int
	root types.UID // the foreign root, for kind foreign
}

const (
	mine = iota
	foreign
	orphan
	pending
)

var claimKind = schema.GroupKind{Kind: "PersistentVolumeClaim"}

// Judge sorts the objects of a namespace. Objects being deleted are on
// their way out and count for nothing. An object with owners is the
// manager's only if every owner chain ends at an object the manager made;
// a chain through an owner the manager cannot see (cluster-scoped, or of a
// kind it may not list) ends at the object itself, which is then foreign.
// A claim that is not the manager's to delete is always kept.
func Judge(in Input) Verdict {
	j := judge{in: in, byUID: map[types.UID]Object{}, memo: map[types.UID]class{}}
	for _, o := range in.Objects {
		j.byUID[o.Meta.UID] = o
	}
	roots := map[types.UID]*Root{}
	var v Verdict
	for _, o := range in.Objects {
		if o.Meta.DeletionTimestamp != nil {
			continue
		}
		c := j.classify(o, nil)
		claim := o.GVK.GroupKind() == claimKind
		switch {
		case claim && c.kind == mine && !in.Deletable(o):
			v.Claims = append(v.Claims, o)
			continue
		case in.Settled && (c.kind == pending || (c.kind == orphan && claim)):
			c = class{kind: foreign, root: o.Meta.UID}
		case in.Settled && c.kind == orphan:
			continue
		}
		switch c.kind {
		case orphan:
			v.Orphans = append(v.Orphans, o)
		case pending:
			v.Pending = append(v.Pending, o)
		case foreign:
			r := roots[c.root]
			if r == nil {
				r = &Root{Object: j.byUID[c.root]}
				roots[c.root] = r
			}
			if c.root != o.Meta.UID {
				r.Owns = append(r.Owns, o)
			}
		}
	}
	for _, r := range roots {
		slices.SortFunc(r.Owns, byKindName)
		v.Foreign = append(v.Foreign, *r)
	}
	slices.SortFunc(v.Foreign, func(a, b Root) int { return byKindName(a.Object, b.Object) })
	slices.SortFunc(v.Claims, byKindName)
	slices.SortFunc(v.Orphans, byKindName)
	slices.SortFunc(v.Pending, byKindName)
	return v
}

type judge struct {
	in    Input
	byUID map[types.UID]Object
	memo  map[types.UID]class
}

// classify follows o's owner chains; path guards against cycles, which the
// API server does not refuse.
func (j *judge) classify(o Object, path []types.UID) class {
	if c, ok := j.memo[o.Meta.UID]; ok {
		return c
	}
	self := class{kind: foreign, root: o.Meta.UID}
	if slices.Contains(path, o.Meta.UID) {
		return self
	}
	c := j.follow(o, append(path, o.Meta.UID))
	j.memo[o.Meta.UID] = c
	return c
}

func (j *judge) follow(o Object, path []types.UID) class {
	refs := o.Meta.OwnerReferences
	if len(refs) == 0 {
		if j.in.Mine(o) {
			return class{kind: mine}
		}
		return class{kind: foreign, root: o.Meta.UID}
	}
	out := class{kind: mine}
	present := 0
	worse := func(c class) {
		if c.kind == pending || (c.kind == orphan && out.kind == mine) {
			out = c
		}
	}
	for _, ref := range refs {
		owner, ok := j.byUID[ref.UID]
		if !ok {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err != nil || !j.in.Listed[gv.WithKind(ref.Kind).GroupKind()] {
				return class{kind: foreign, root: o.Meta.UID} // an owner it cannot see
			}
			continue // gone
		}
		present++
		if owner.Meta.DeletionTimestamp != nil {
			worse(class{kind: pending})
			continue
		}
		c := j.classify(owner, path)
		if c.kind == foreign {
			return c
		}
		worse(c)
	}
	if present == 0 {
		return class{kind: orphan}
	}
	return out
}

func byKindName(a, b Object) int {
	return cmp.Or(cmp.Compare(a.GVK.Kind, b.GVK.Kind), cmp.Compare(a.Meta.Name, b.Meta.Name))
}
