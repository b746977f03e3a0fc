//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/testkit"
)

// foreignObject is an object someone other than the manager made in a user
// namespace, which must outlive the user's last app.
type foreignObject struct {
	resource        schema.GroupVersionResource
	namespace, name string
}

var (
	pods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	claims     = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
)

// plantForeign makes, in namespace, one of four shapes by i: a ConfigMap,
// a bare pod, an unannotated claim, or a database pod owning a ConfigMap
// and a claim (as an operator keeps them).
func plantForeign(ctx context.Context, c *localcluster.Cluster, namespace string, i int) ([]foreignObject, error) {
	core := c.Clientset.CoreV1()
	cm := func(name string, owners ...metav1.OwnerReference) error {
		_, err := core.ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
			Data: map[string]string{"note": "someone's data"}}, metav1.CreateOptions{})
		return err
	}
	switch i % 4 {
	case 0:
		return []foreignObject{{configMaps, namespace, "notes"}}, cm("notes")
	case 1:
		_, err := core.Pods(namespace).Create(ctx, testkit.MakeRestrictedPod("debug", namespace), metav1.CreateOptions{})
		return []foreignObject{{pods, namespace, "debug"}}, err
	case 2:
		_, err := core.PersistentVolumeClaims(namespace).Create(ctx, testkit.MakeClaim("scratch", namespace), metav1.CreateOptions{})
		return []foreignObject{{claims, namespace, "scratch"}}, err
	}
	pod, err := core.Pods(namespace).Create(ctx, testkit.MakeRestrictedPod("db-0", namespace), metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	if err := cm("db-config", testkit.OwnedBy(pod)); err != nil {
		return nil, err
	}
	_, err = core.PersistentVolumeClaims(namespace).Create(ctx, testkit.MakeClaim("db-data", namespace, testkit.OwnedBy(pod)), metav1.CreateOptions{})
	return []foreignObject{{pods, namespace, "db-0"}, {configMaps, namespace, "db-config"}, {claims, namespace, "db-data"}}, err
}

// lostForeign counts the planted objects that are gone or being deleted.
func lostForeign(t *testing.T, objs []foreignObject) (lost []string) {
	t.Helper()
	for _, o := range objs {
		u, err := cluster.Dynamic.Resource(o.resource).Namespace(o.namespace).Get(t.Context(), o.name, metav1.GetOptions{})
		if err != nil || u.GetDeletionTimestamp() != nil {
			lost = append(lost, fmt.Sprintf("%s %s/%s", o.resource.Resource, o.namespace, o.name))
		}
	}
	return lost
}

// plantAll plants foreign objects in the namespaces of users 0, 2, 4, …
// (at most 20 namespaces) and returns them with those namespaces.
func plantAll(t *testing.T, users int) ([]foreignObject, map[string]bool) {
	t.Helper()
	var objs []foreignObject
	kept := map[string]bool{}
	for u := 0; u < users && len(kept) < 20; u += 2 {
		ns := fmt.Sprintf("user-chaos-%d", u)
		planted, err := plantForeign(t.Context(), cluster, ns, len(kept))
		require.NoError(t, err, "plant in %s", ns)
		objs = append(objs, planted...)
		kept[ns] = true
	}
	return objs, kept
}
