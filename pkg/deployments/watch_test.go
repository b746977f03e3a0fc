package deployments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// indexedReconciler serves byIndex from an indexer holding uds.
func indexedReconciler(t *testing.T, uds ...*v1alpha1.UserDeployment) *Reconciler {
	t.Helper()
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &v1alpha1.UserDeployment{}, 0, toolscache.Indexers{})
	require.NoError(t, inf.AddIndexers(indexers))
	for _, ud := range uds {
		require.NoError(t, inf.GetIndexer().Add(ud))
	}
	return &Reconciler{udInformers: []toolscache.SharedIndexInformer{inf}}
}

func TestMappings(t *testing.T) {
	mk := func(ns, name, user, tmpl string, deps []string) *v1alpha1.UserDeployment {
		return &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.UserDeploymentSpec{UserID: user, Template: tmpl, DependsOn: deps}}
	}
	r := indexedReconciler(t,
		mk("a", "api", "u1", "", nil),
		mk("a", "front", "u1", "web", []string{"api"}),
		mk("b", "shop", "u2", "web", nil),
	)
	tmpl := &v1alpha1.DeploymentTemplate{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	assert.ElementsMatch(t, []reconcile.Request{req("a", "front"), req("b", "shop")}, r.mapTemplate(t.Context(), tmpl))
	assert.Equal(t, []reconcile.Request{req("a", "api"), req("a", "front")}, r.mapUserDeployment(t.Context(), mk("a", "api", "u1", "", nil)))

	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{render.AnnotationUserDeployment: "b.shop"}}}
	assert.Equal(t, []reconcile.Request{req("b", "shop")}, r.mapChild(t.Context(), child))
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{labelkeys.User: "u1"}}}
	assert.ElementsMatch(t, []reconcile.Request{req("a", "api"), req("a", "front")}, r.mapChild(t.Context(), quota))
	assert.Empty(t, r.mapChild(t.Context(), &corev1.ConfigMap{}))

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "user-u1", Labels: map[string]string{labelkeys.UserDeployment: render.KeyLabel("a.front")}}}
	assert.Equal(t, []reconcile.Request{req("a", "front")}, r.mapPod(pod), "a pod maps through its user-deployment label")
	assert.Empty(t, r.mapPod(&corev1.Pod{}))
}
