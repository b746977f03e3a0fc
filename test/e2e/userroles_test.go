//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUserRolesAggregate: one RoleBinding to Kubernetes' own view or edit
// role, or to opsnorth-scheduler-approve, hands a person the scheduler
// kinds of that namespace and nothing of any other; the real
// kube-controller-manager aggregates our roles into view and edit.
func TestUserRolesAggregate(t *testing.T) {
	c := requireCluster(t)
	ns, other := newNamespace(t, c), newNamespace(t, c)
	id := time.Now().Unix() % 100000
	bind := func(role string) string {
		user := fmt.Sprintf("e2e-%d-%s", id, role)
		_, err := c.Clientset.RbacV1().RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		return user
	}
	viewer, editor, approver := bind("view"), bind("edit"), bind("opsnorth-scheduler-approve")
	for _, tc := range []struct {
		user, verb, group, resource, ns string
		allowed                         bool
	}{
		{viewer, "list", "scheduler.opsnorth.io", "workflows", ns, true},
		{viewer, "get", "ossa.ai", "agents", ns, true},
		{viewer, "create", "scheduler.opsnorth.io", "agenttasks", ns, false},
		{editor, "create", "scheduler.opsnorth.io", "agenttasks", ns, true},
		{editor, "delete", "scheduler.opsnorth.io", "userdeployments", ns, true},
		{editor, "update", "ossa.ai", "agents", ns, true},
		{editor, "create", "scheduler.opsnorth.io", "workflows", other, false},
		{approver, "update", "scheduler.opsnorth.io", "workflows", ns, true},
		{approver, "create", "scheduler.opsnorth.io", "workflows", ns, false},
		{approver, "delete", "scheduler.opsnorth.io", "workflows", ns, false},
		{approver, "get", "scheduler.opsnorth.io", "agenttasks", ns, false},
	} {
		name := fmt.Sprintf("%s %s %s/%s in %s", tc.user, tc.verb, tc.group, tc.resource, tc.ns)
		t.Run(name, func(t *testing.T) {
			// Aggregation is the controller manager's, a moment after start.
			assert.Eventually(t, func() bool {
				sar, err := c.Clientset.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
					Spec: authorizationv1.SubjectAccessReviewSpec{User: tc.user, ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: tc.ns, Verb: tc.verb, Group: tc.group, Resource: tc.resource}}}, metav1.CreateOptions{})
				return err == nil && sar.Status.Allowed == tc.allowed
			}, 30*time.Second, 250*time.Millisecond, "want allowed=%v", tc.allowed)
		})
	}
}
