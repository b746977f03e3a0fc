package deployments_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestNamespaceSquatting: an existing namespace of the user namespace's
// name is used only when the manager created it for this user or the
// platform bound it to this user. Anything else is refused, and the
// namespace is left exactly as it was.
func TestNamespaceSquatting(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)
	for _, tc := range []struct {
		name        string
		labels      func(user string) map[string]string
		annotations map[string]string
		want        func(user string) string
	}{
		{"an unbound namespace someone else created", func(string) map[string]string { return map[string]string{"team": "platform"} }, nil,
			func(u string) string {
				return "namespace user-" + u + " exists and was not created by the manager; it is used only when bound to user \"" + u +
					"\" (label scheduler.opsnorth.io/tenant=" + u + ") or once it is deleted"
			}},
		{"a namespace bound to another user", func(string) map[string]string { return map[string]string{labelkeys.Tenant: "mallory"} }, nil,
			func(u string) string {
				return "namespace user-" + u + " is bound to user \"mallory\" (label scheduler.opsnorth.io/tenant), not \"" + u + "\""
			}},
		{"a namespace the manager created for another user", func(string) map[string]string { return map[string]string{labelkeys.User: "mallory"} },
			map[string]string{render.AnnotationCreatedNamespace: "opsnorth-scheduler-deployments"},
			func(u string) string {
				return "namespace user-" + u + " was created by the manager for user \"mallory\", not \"" + u + "\""
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			user := userID("sq")
			userNS := "user-" + user
			victim := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNS, Labels: tc.labels(user), Annotations: tc.annotations}}
			require.NoError(t, c.Create(ctx, victim))
			before := namespaceMeta(t, c, userNS)

			require.NoError(t, c.Create(ctx, rawUD(ns, tc.name[:1]+user[len(user)-5:], user)))
			got := waitPhase(t, c, ns, tc.name[:1]+user[len(user)-5:], v1alpha1.PhaseError)
			assert.Equal(t, "True/NamespaceNotOwned: "+tc.want(user), condition(got, "Stalled"))
			assert.Equal(t, tc.want(user), got.Status.LastError)
			assert.Never(t, func() bool { return len(managedObjects(t, c, user)) > 0 }, settle, 200*time.Millisecond,
				"nothing is created in a namespace the manager may not use")
			assert.Equal(t, before, namespaceMeta(t, c, userNS), "the namespace is left as it was")
		})
	}
}

// TestBoundNamespaceIsRestored: a namespace the platform bound to the user
// is provisioned into, hardened, and on release gets every label and
// annotation back exactly as it was; it is never deleted.
func TestBoundNamespaceIsRestored(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)
	user := userID("kai")
	userNS := "user-" + user
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNS,
		Labels: map[string]string{"team": "platform", labelkeys.Tenant: user, render.PodSecurityEnforce: "baseline",
			labelkeys.ManagedBy: "argocd"},
		Annotations: map[string]string{"owner": "infra"}}}))
	before := namespaceMeta(t, c, userNS)

	require.NoError(t, c.Create(ctx, rawUD(ns, "hello", user)))
	waitPhase(t, c, ns, "hello", v1alpha1.PhaseProvisioning)
	nsObj := waitObject(t, c, render.GVKNamespace, "", userNS, nil)
	assert.Equal(t, "restricted", nsObj.GetLabels()[render.PodSecurityEnforce])
	assert.Equal(t, labelkeys.ManagedByValue, nsObj.GetLabels()[labelkeys.ManagedBy])
	assert.Empty(t, nsObj.GetAnnotations()[render.AnnotationCreatedNamespace], "the manager did not create it")
	assert.JSONEq(t, `{"app.kubernetes.io/managed-by":"argocd","app.kubernetes.io/part-of":null,
		"pod-security.kubernetes.io/enforce":"baseline","pod-security.kubernetes.io/enforce-version":null,
		"scheduler.opsnorth.io/user":null}`, nsObj.GetAnnotations()[render.AnnotationRestore])

	deleteUD(t, c, ns, "hello")
	assert.Empty(t, managedObjects(t, c, user), "children, quota and limit range are gone")
	nsObj, err := getU(t, c, render.GVKNamespace, "", userNS)
	require.NoError(t, err)
	assert.Nil(t, nsObj.GetDeletionTimestamp(), "a namespace the manager did not create is kept")
	assert.Equal(t, before, namespaceMeta(t, c, userNS), "every label and annotation is as it was")
}

// TestNamespaceWithForeignObjectsIsKept: the last app of a user goes, but
// the namespace the manager created holds a ConfigMap someone else made, so
// the manager removes its children, keeps the namespace and says why.
func TestNamespaceWithForeignObjectsIsKept(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns)
	user := userID("lee")
	userNS := "user-" + user
	require.NoError(t, c.Create(ctx, rawUD(ns, "hello", user)))
	waitPhase(t, c, ns, "hello", v1alpha1.PhaseProvisioning)
	require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "notes", Namespace: userNS},
		Data: map[string]string{"todo": "back up the database"}}))

	deleteUD(t, c, ns, "hello")
	note := waitEvent(t, c, ns, "hello", "NamespaceKept", "ConfigMap notes")
	assert.Equal(t, "every child removed; namespace "+userNS+" kept: it holds objects the manager did not create: ConfigMap notes", note)
	nsObj, err := getU(t, c, render.GVKNamespace, "", userNS)
	require.NoError(t, err)
	assert.Nil(t, nsObj.GetDeletionTimestamp(), "the namespace is kept")
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: userNS, Name: "notes"}, &cm))
	assert.Equal(t, "back up the database", cm.Data["todo"])
	assert.Equal(t, []string{"LimitRange/opsnorth-tier", "Namespace/" + userNS, "ResourceQuota/opsnorth-cross-namespace-affinity",
		"ResourceQuota/opsnorth-inventory", "ResourceQuota/opsnorth-tier"}, managedObjects(t, c, user), "the app's children are gone; the namespace keeps its limits")
}

// namespaceMeta is a namespace's labels and annotations.
func namespaceMeta(t *testing.T, c client.Client, name string) map[string]map[string]string {
	t.Helper()
	var ns corev1.Namespace
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Name: name}, &ns))
	return map[string]map[string]string{"labels": ns.Labels, "annotations": ns.Annotations}
}
