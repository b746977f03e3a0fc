package tenancy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tenancy"
)

func TestCheckUse(t *testing.T) {
	ref := tenancy.Ref{Field: "spec.serviceAccountName", Kind: "ServiceAccount", Name: "agent"}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		user   string
		ok     bool
	}{
		{"labelled for the user", map[string]string{labelkeys.User: "alice"}, "alice", true},
		{"shared", map[string]string{labelkeys.Shared: "true"}, "alice", true},
		{"another user's", map[string]string{labelkeys.User: "bob"}, "alice", false},
		{"unlabelled", nil, "alice", false},
		{"shared with another value", map[string]string{labelkeys.Shared: "yes"}, "alice", false},
		{"empty user never matches an empty label", map[string]string{labelkeys.User: ""}, "", false},
		{"the user's id as another key", map[string]string{labelkeys.UserID: "alice"}, "alice", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Name: "agent", Labels: tc.labels}
			assert.Equal(t, tc.ok, tenancy.MayUse(obj, tc.user))
			err := tenancy.CheckUse(ref, "agent-tasks", obj, tc.user)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tenancy.ErrNotAllowed)
			assert.Equal(t, `spec.serviceAccountName: not allowed for this user: ServiceAccount agent-tasks/agent is labelled neither `+
				`scheduler.opsnorth.io/user=`+tc.user+` nor scheduler.opsnorth.io/shared=true`, err.Error())
		})
	}
}

func TestCheckBinding(t *testing.T) {
	backend := map[string]string{labelkeys.Backend: labelkeys.BackendValue}
	users := func(list string) map[string]string { return map[string]string{labelkeys.BackendUsers: list} }
	const notListed = `spec.userId: "bob" is not among the users backend namespace team-a may act for (annotation scheduler.opsnorth.io/backend-users)`
	const notServed = `spec.userId: namespace team-a is neither bound to a user (label scheduler.opsnorth.io/tenant=<userId>) ` +
		`nor a backend namespace (label scheduler.opsnorth.io/backend=true)`
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		user        string
		reason      string
		message     string
	}{
		{"unlabelled serves nobody", nil, nil, "bob", tenancy.ReasonNamespaceNotServed, notServed},
		{"a user label is not a binding", map[string]string{labelkeys.User: "bob"}, nil, "bob", tenancy.ReasonNamespaceNotServed, notServed},
		{"a users list without the backend label serves nobody", nil, users("bob"), "bob", tenancy.ReasonNamespaceNotServed, notServed},
		{"a backend label other than true serves nobody", map[string]string{labelkeys.Backend: "yes"}, nil, "bob",
			tenancy.ReasonNamespaceNotServed, notServed},
		{"bound to the user", map[string]string{labelkeys.Tenant: "bob"}, nil, "bob", "", ""},
		{"bound to another user", map[string]string{labelkeys.Tenant: "alice"}, nil, "bob", tenancy.ReasonTenantMismatch,
			`spec.userId: "bob" is not "alice", the user namespace team-a is bound to (label scheduler.opsnorth.io/tenant)`},
		{"bound to nobody admits nobody", map[string]string{labelkeys.Tenant: ""}, nil, "bob", tenancy.ReasonTenantMismatch,
			`spec.userId: "bob" is not "", the user namespace team-a is bound to (label scheduler.opsnorth.io/tenant)`},
		{"the binding wins over the backend label", map[string]string{labelkeys.Tenant: "alice", labelkeys.Backend: "true"}, nil, "bob",
			tenancy.ReasonTenantMismatch, `spec.userId: "bob" is not "alice", the user namespace team-a is bound to (label scheduler.opsnorth.io/tenant)`},
		{"a backend without a list acts for anyone", backend, nil, "bob", "", ""},
		{"a backend acts for a listed user", backend, users("alice, bob"), "bob", "", ""},
		{"a backend refuses an unlisted user", backend, users("alice,carol"), "bob", tenancy.ReasonUserNotAllowed, notListed},
		{"a backend with an empty list acts for nobody", backend, users(" , "), "bob", tenancy.ReasonUserNotAllowed, notListed},
		{"a listed prefix is not the user", backend, users("bo,bobby"), "bob", tenancy.ReasonUserNotAllowed, notListed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tenancy.CheckBinding("team-a", tc.labels, tc.annotations, tc.user)
			assert.Equal(t, tenancy.Denial{Reason: tc.reason, Message: tc.message}, d)
			assert.Equal(t, tc.reason != "", d.Denied())
		})
	}
}
