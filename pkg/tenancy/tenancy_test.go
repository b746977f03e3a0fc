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
	for _, tc := range []struct {
		name   string
		labels map[string]string
		user   string
		want   string
	}{
		{"unbound", nil, "bob", ""},
		{"unbound with other labels", map[string]string{labelkeys.User: "alice"}, "bob", ""},
		{"bound to the user", map[string]string{labelkeys.Tenant: "bob"}, "bob", ""},
		{"bound to another user", map[string]string{labelkeys.Tenant: "alice"}, "bob",
			`spec.userId: "bob" is not "alice", the user namespace team-a is bound to (label scheduler.opsnorth.io/tenant)`},
		{"bound to nobody admits nobody", map[string]string{labelkeys.Tenant: ""}, "bob",
			`spec.userId: "bob" is not "", the user namespace team-a is bound to (label scheduler.opsnorth.io/tenant)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tenancy.CheckBinding("team-a", tc.labels, tc.user))
		})
	}
}
