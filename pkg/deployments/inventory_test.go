package deployments_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestInventoryKeepsWhatOthersMade: the last app of a user goes while the
// namespace the manager created holds something the manager did not make.
// Each case keeps the namespace, every object in it, and names what was
// kept in the final status and an Event.
func TestInventoryKeepsWhatOthersMade(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)
	hidden := "widgets." + "inv" + rand.String(5) + ".example.com"
	tests := []struct {
		name string
		make func(t *testing.T, userNS string) []client.Object
		kept string
	}{
		{
			name: "a database pod with the config map and claim it owns",
			make: func(t *testing.T, userNS string) []client.Object {
				pod := testkit.MakeRestrictedPod("db-0", userNS)
				require.NoError(t, c.Create(t.Context(), pod))
				owner := testkit.OwnedBy(pod)
				return []client.Object{pod,
					&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-config", Namespace: userNS, OwnerReferences: []metav1.OwnerReference{owner}}},
					testkit.MakeClaim("db-data", userNS, owner)}
			},
			kept: "it holds objects the manager did not create: Pod db-0 (owner of ConfigMap db-config, PersistentVolumeClaim db-data)",
		},
		{
			name: "a workflow beside the app",
			make: func(_ *testing.T, userNS string) []client.Object {
				return []client.Object{testkit.MakeWorkflow("nightly", userNS).Step(testkit.MakeStep("a")).Obj()}
			},
			kept: "it holds objects the manager did not create: Workflow nightly",
		},
		{
			name: "an unannotated claim",
			make: func(_ *testing.T, userNS string) []client.Object {
				return []client.Object{testkit.MakeClaim("scratch", userNS)}
			},
			kept: "it holds objects the manager did not create: PersistentVolumeClaim scratch",
		},
		{
			name: "a kind the manager may not list",
			make: func(t *testing.T, userNS string) []client.Object {
				return []client.Object{hiddenObject(hiddenCRD(t, c, hidden), userNS)}
			},
			kept: "the manager may not list " + hidden + ", so it cannot tell whose they are",
		},
		{
			// The kind above was removed when its case ended, moments ago:
			// the manager's discovery may still hold it, and RBAC refuses
			// the list before the API server finds the kind gone.
			name: "a refused kind removed since discovery",
			make: func(t *testing.T, userNS string) []client.Object {
				return []client.Object{testkit.MakeRestrictedPod("debug", userNS)}
			},
			kept: "it holds objects the manager did not create: Pod debug",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := userID("inv")
			userNS := "user-" + user
			require.NoError(t, c.Create(t.Context(), rawUD(ns, "hello", user)))
			waitPhase(t, c, ns, "hello", v1alpha1.PhaseProvisioning)
			var objs []client.Object
			for _, o := range tt.make(t, userNS) {
				if o.GetUID() == "" {
					require.NoError(t, c.Create(t.Context(), o))
				}
				objs = append(objs, o)
			}

			deleteUD(t, c, ns, "hello")
			want := "every child removed; namespace " + userNS + " kept: " + tt.kept
			assert.Equal(t, want, waitEvent(t, c, ns, "hello", "NamespaceKept", userNS))
			var nsObj corev1.Namespace
			require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: userNS}, &nsObj))
			assert.Nil(t, nsObj.DeletionTimestamp, "the namespace is kept")
			for _, o := range objs {
				live := &unstructured.Unstructured{}
				gvk, err := c.GroupVersionKindFor(o)
				require.NoError(t, err)
				live.SetGroupVersionKind(gvk)
				require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(o), live), "%s %s is still there", gvk.Kind, o.GetName())
				assert.Nil(t, live.GetDeletionTimestamp())
			}
		})
	}
}

// hiddenCRD installs name, a namespaced kind "widgets.<group>" of a group
// the manager's rules do not name, and removes it when the test ends.
func hiddenCRD(t *testing.T, c client.Client, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	group := strings.TrimPrefix(name, "widgets.")
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					XPreserveUnknownFields: ptr.To(true)}}}}}}
	require.NoError(t, c.Create(t.Context(), crd))
	t.Cleanup(func() {
		require.NoError(t, c.Delete(context.Background(), crd))
		require.Eventually(t, func() bool {
			return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(crd), crd))
		}, wait, 200*time.Millisecond, "the CRD is removed")
	})
	require.Eventually(t, func() bool {
		var list unstructured.UnstructuredList
		list.SetAPIVersion(group + "/v1")
		list.SetKind("WidgetList")
		return c.List(t.Context(), &list) == nil
	}, wait, 200*time.Millisecond, "the CRD is served")
	return crd
}

func hiddenObject(crd *apiextensionsv1.CustomResourceDefinition, namespace string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(crd.Spec.Group + "/v1")
	u.SetKind("Widget")
	u.SetNamespace(namespace)
	u.SetName("gadget")
	return u
}
