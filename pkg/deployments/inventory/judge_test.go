package inventory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	gvkPod  = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	gvkCM   = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	gvkPVC  = schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}
	gvkRS   = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	gvkDep  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	gvkWF   = schema.GroupVersionKind{Group: "scheduler.opsnorth.io", Version: "v1alpha1", Kind: "Workflow"}
	gvkNode = schema.GroupVersionKind{Version: "v1", Kind: "Node"}
)

// obj builds an object; marks "mine" and "delete" set the manager's mark
// and the claim's Delete policy, "going" a deletion timestamp.
func obj(gvk schema.GroupVersionKind, name string, marks ...string) Object {
	o := Object{GVK: gvk, Meta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Annotations: map[string]string{}}}
	for _, m := range marks {
		switch m {
		case "going":
			o.Meta.DeletionTimestamp = &metav1.Time{}
		default:
			o.Meta.Annotations[m] = "true"
		}
	}
	return o
}

func ownedBy(o Object, owners ...Object) Object {
	for _, w := range owners {
		o.Meta.OwnerReferences = append(o.Meta.OwnerReferences, metav1.OwnerReference{
			APIVersion: w.GVK.GroupVersion().String(), Kind: w.GVK.Kind, Name: w.Meta.Name, UID: w.Meta.UID})
	}
	return o
}

func names(objs []Object) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, Name(o))
	}
	return out
}

func TestJudge(t *testing.T) {
	dep := obj(gvkDep, "web", "mine")
	rs := ownedBy(obj(gvkRS, "web-1"), dep)
	goneDep := obj(gvkDep, "gone")
	db := obj(gvkPod, "db-0")
	node := obj(gvkNode, "node-1")
	tests := []struct {
		name    string
		objs    []Object
		settled bool
		foreign string // Describe(Foreign)
		claims  []string
		orphans []string
		pending []string
	}{
		{name: "only the manager's", objs: []Object{dep, rs, ownedBy(obj(gvkPod, "web-1-a"), rs)}},
		{name: "a bare pod", objs: []Object{obj(gvkPod, "debug")}, foreign: "Pod debug"},
		{name: "a database pod with what it owns", objs: []Object{db, ownedBy(obj(gvkCM, "db-config"), db), ownedBy(obj(gvkPVC, "db-data"), db)},
			foreign: "Pod db-0 (owner of ConfigMap db-config, PersistentVolumeClaim db-data)"},
		{name: "a foreign custom resource", objs: []Object{obj(gvkWF, "nightly"), dep}, foreign: "Workflow nightly"},
		{name: "owned by the manager and by someone else", objs: []Object{dep, db, ownedBy(obj(gvkCM, "shared"), dep, db)},
			foreign: "Pod db-0 (owner of ConfigMap shared)"},
		{name: "owner of a kind it cannot see", objs: []Object{ownedBy(obj(gvkCM, "node-cm"), node)}, foreign: "ConfigMap node-cm"},
		{name: "owner gone: an orphan", objs: []Object{ownedBy(obj(gvkRS, "gone-1"), goneDep)}, orphans: []string{"ReplicaSet gone-1"}},
		{name: "orphan's dependents are orphans", objs: []Object{ownedBy(obj(gvkRS, "gone-1"), goneDep),
			ownedBy(obj(gvkPod, "gone-1-a"), ownedBy(obj(gvkRS, "gone-1"), goneDep))},
			orphans: []string{"Pod gone-1-a", "ReplicaSet gone-1"}},
		{name: "settled orphans are garbage", objs: []Object{ownedBy(obj(gvkRS, "gone-1"), goneDep)}, settled: true},
		{name: "owner being deleted", objs: []Object{obj(gvkDep, "old", "going"), ownedBy(obj(gvkRS, "old-1"), obj(gvkDep, "old", "going"))},
			pending: []string{"ReplicaSet old-1"}},
		{name: "settled pending objects are kept", objs: []Object{obj(gvkDep, "old", "going"), ownedBy(obj(gvkRS, "old-1"), obj(gvkDep, "old", "going"))},
			settled: true, foreign: "ReplicaSet old-1"},
		{name: "going objects count for nothing", objs: []Object{obj(gvkPod, "leaving", "going")}},
		{name: "the manager's retained claim", objs: []Object{obj(gvkPVC, "data", "mine")}, claims: []string{"PersistentVolumeClaim data"}},
		{name: "the manager's claim to delete", objs: []Object{obj(gvkPVC, "scratch", "mine", "delete")}},
		{name: "an unannotated claim", objs: []Object{obj(gvkPVC, "mine-too")}, foreign: "PersistentVolumeClaim mine-too"},
		{name: "an orphaned claim waits, then is kept", objs: []Object{ownedBy(obj(gvkPVC, "left"), goneDep)}, orphans: []string{"PersistentVolumeClaim left"}},
		{name: "settled orphaned claim", objs: []Object{ownedBy(obj(gvkPVC, "left"), goneDep)}, settled: true, foreign: "PersistentVolumeClaim left"},
		{name: "a claim owned by the manager's object but without Delete", objs: []Object{dep, ownedBy(obj(gvkPVC, "web-data"), dep)},
			claims: []string{"PersistentVolumeClaim web-data"}},
		{name: "an owner cycle", objs: []Object{ownedBy(obj(gvkCM, "a"), obj(gvkCM, "b")), ownedBy(obj(gvkCM, "b"), obj(gvkCM, "a"))},
			foreign: "ConfigMap a (owner of ConfigMap b)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(Input{Objects: tt.objs, Settled: tt.settled,
				Listed:    map[schema.GroupKind]bool{gvkDep.GroupKind(): true, gvkRS.GroupKind(): true, gvkPod.GroupKind(): true, gvkCM.GroupKind(): true},
				Mine:      func(o Object) bool { return o.Meta.Annotations["mine"] != "" },
				Deletable: func(o Object) bool { return o.Meta.Annotations["delete"] != "" }})
			assert.Equal(t, tt.foreign, Describe(v.Foreign), "foreign")
			assert.Equal(t, nonNil(tt.claims), names(v.Claims), "claims")
			assert.Equal(t, nonNil(tt.orphans), names(v.Orphans), "orphans")
			assert.Equal(t, nonNil(tt.pending), names(v.Pending), "pending")
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestDescribeBounds(t *testing.T) {
	var roots []Root
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		roots = append(roots, Root{Object: obj(gvkCM, n), Owns: []Object{obj(gvkPod, n+"-pod")}})
	}
	assert.Equal(t, "ConfigMap a (owner of Pod a-pod), ConfigMap b (owner of Pod b-pod), ConfigMap c (owner of Pod c-pod), "+
		"ConfigMap d (owner of Pod d-pod), ConfigMap e (owner of Pod e-pod), ConfigMap f (owner of Pod f-pod) and 8 more", Describe(roots))
	assert.Empty(t, Describe(nil))
}
