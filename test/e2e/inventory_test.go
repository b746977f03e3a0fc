//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/testkit"
)

// gadgets is a foreign kind the platform lets the deployments manager list
// through its aggregated inventory ClusterRole.
var gadgets = schema.GroupVersionResource{Group: "e2e.opsnorth.test", Version: "v1", Resource: "gadgets"}

// TestDeleteKeepsForeignObjects: with the real garbage collector, the last
// app of each user is deleted while the namespace holds what someone else
// made. The namespace stays, with every such object; the app's own
// children (and their ReplicaSets and pods) go; the Event names what kept it.
func TestDeleteKeepsForeignObjects(t *testing.T) {
	c := requireCluster(t)
	foreignKind(t, c)
	kube := c.Clientset.CoreV1()
	tests := []struct {
		name string
		make func(t *testing.T, ns string) []func() error // each checks its object is intact
		kept string
	}{
		{
			name: "database",
			make: func(t *testing.T, ns string) []func() error {
				pod, err := kube.Pods(ns).Create(t.Context(), testkit.MakeRestrictedPod("db-0", ns), metav1.CreateOptions{})
				require.NoError(t, err)
				owner := []metav1.OwnerReference{testkit.OwnedBy(pod)}
				_, err = kube.ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-config",
					OwnerReferences: owner}, Data: map[string]string{"max_connections": "100"}}, metav1.CreateOptions{})
				require.NoError(t, err)
				_, err = kube.PersistentVolumeClaims(ns).Create(t.Context(), testkit.MakeClaim("db-data", ns, owner...), metav1.CreateOptions{})
				require.NoError(t, err)
				return []func() error{exists(t, c, "pods", ns, "db-0"), exists(t, c, "configmaps", ns, "db-config"),
					exists(t, c, "persistentvolumeclaims", ns, "db-data")}
			},
			kept: "it holds objects the manager did not create: Pod db-0 (owner of ConfigMap db-config, PersistentVolumeClaim db-data)",
		},
		{
			name: "bare-pod",
			make: func(t *testing.T, ns string) []func() error {
				_, err := kube.Pods(ns).Create(t.Context(), testkit.MakeRestrictedPod("debug", ns), metav1.CreateOptions{})
				require.NoError(t, err)
				return []func() error{exists(t, c, "pods", ns, "debug")}
			},
			kept: "it holds objects the manager did not create: Pod debug",
		},
		{
			name: "custom-resource",
			make: func(t *testing.T, ns string) []func() error {
				g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "e2e.opsnorth.test/v1", "kind": "Gadget",
					"metadata": map[string]any{"name": "gizmo"}, "spec": map[string]any{"size": "large"}}}
				_, err := c.Dynamic.Resource(gadgets).Namespace(ns).Create(t.Context(), g, metav1.CreateOptions{})
				require.NoError(t, err)
				return []func() error{func() error {
					_, err := c.Dynamic.Resource(gadgets).Namespace(ns).Get(t.Context(), "gizmo", metav1.GetOptions{})
					return err
				}}
			},
			kept: "it holds objects the manager did not create: Gadget gizmo",
		},
		{
			name: "unannotated-claim",
			make: func(t *testing.T, ns string) []func() error {
				_, err := kube.PersistentVolumeClaims(ns).Create(t.Context(), testkit.MakeClaim("scratch", ns), metav1.CreateOptions{})
				require.NoError(t, err)
				return []func() error{exists(t, c, "persistentvolumeclaims", ns, "scratch")}
			},
			kept: "it holds objects the manager did not create: PersistentVolumeClaim scratch",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := scheduler(t, c)
			ns := newNamespace(t, c)
			name := fmt.Sprintf("e2e-%d-%s", time.Now().Unix()%100000, tt.name)
			userNS := "user-" + name
			_, err := cs.SchedulerV1alpha1().UserDeployments(ns).Create(t.Context(), userDeployment(ns, "app", name), metav1.CreateOptions{})
			require.NoError(t, err)
			var deps *appsv1.DeploymentList
			require.Eventually(t, func() bool {
				deps, err = c.Clientset.AppsV1().Deployments(userNS).List(t.Context(), metav1.ListOptions{})
				return err == nil && len(deps.Items) == 1 && deps.Items[0].Status.ReadyReplicas == 1
			}, timeout, tick, "the app runs in %s", userNS)
			t.Cleanup(func() {
				_ = c.Clientset.CoreV1().Namespaces().Delete(context.Background(), userNS, metav1.DeleteOptions{})
			})
			intact := tt.make(t, userNS)

			require.NoError(t, cs.SchedulerV1alpha1().UserDeployments(ns).Delete(t.Context(), "app", metav1.DeleteOptions{}))
			note := waitNote(t, c, ns, "app", "NamespaceKept")
			assert.Equal(t, "every child removed; namespace "+userNS+" kept: "+tt.kept, note)
			require.Eventually(t, func() bool {
				pods, err := kube.Pods(userNS).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance"})
				return err == nil && len(pods.Items) == 0
			}, timeout, tick, "the garbage collector removed the app's pods")
			got, err := kube.Namespaces().Get(t.Context(), userNS, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Nil(t, got.DeletionTimestamp, "the namespace is kept")
			for _, check := range intact {
				assert.NoError(t, check(), "every foreign object is kept")
			}
		})
	}
}

// foreignKind installs the Gadget CRD and the ClusterRole that lets the
// deployments manager list it, both removed when the test ends.
func foreignKind(t *testing.T, c *localcluster.Cluster) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: gadgets.Resource + "." + gadgets.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: gadgets.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					XPreserveUnknownFields: ptr.To(true)}}}}}}
	ext, err := apiextensionsclient.NewForConfig(c.Config)
	require.NoError(t, err)
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	_, err = crds.Create(t.Context(), crd, metav1.CreateOptions{})
	require.NoError(t, err)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-inventory-gadgets",
		Labels: map[string]string{"scheduler.opsnorth.io/aggregate-to-deployments-inventory": "true"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{gadgets.Group}, Resources: []string{gadgets.Resource}, Verbs: []string{"list"}}}}
	_, err = c.Clientset.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		// The kind first, and until it is gone: while it is served, a
		// manager that may not list it keeps every namespace it releases.
		ctx := context.Background()
		assert.NoError(t, crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}))
		assert.Eventually(t, func() bool {
			_, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, timeout, tick, "the Gadget CRD is removed")
		_ = c.Clientset.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
	})
	require.Eventually(t, func() bool {
		_, err := c.Dynamic.Resource(gadgets).List(t.Context(), metav1.ListOptions{})
		return err == nil
	}, timeout, tick, "the Gadget CRD is served")
}

// exists checks that a core object is still there and not being deleted.
func exists(t *testing.T, c *localcluster.Cluster, resource, ns, name string) func() error {
	return func() error {
		u, err := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: resource}).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if u.GetDeletionTimestamp() != nil {
			return apierrors.NewConflict(schema.GroupResource{Resource: resource}, name, fmt.Errorf("being deleted"))
		}
		return nil
	}
}
