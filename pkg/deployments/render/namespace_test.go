package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestAdoption(t *testing.T) {
	created := map[string]string{AnnotationCreatedNamespace: "opsnorth-scheduler-deployments"}
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		created     bool
		restore     string
		err         string
	}{
		{name: "created for the user", labels: map[string]string{"scheduler.opsnorth.io/user": "bob"}, annotations: created, created: true},
		{name: "created, no user label yet", annotations: created, created: true},
		{name: "created for another user", labels: map[string]string{"scheduler.opsnorth.io/user": "eve"}, annotations: created,
			err: `namespace user-bob was created by the manager for user "eve", not "bob"`},
		{name: "unbound", labels: map[string]string{"team": "a"},
			err: `namespace user-bob exists and was not created by the manager; it is used only when bound to user "bob" (label scheduler.opsnorth.io/tenant=bob) or once it is deleted`},
		{name: "bound to another user", labels: map[string]string{"scheduler.opsnorth.io/tenant": "eve"},
			err: `namespace user-bob is bound to user "eve" (label scheduler.opsnorth.io/tenant), not "bob"`},
		{name: "bound to the user: a new record", labels: map[string]string{"scheduler.opsnorth.io/tenant": "bob", PodSecurityEnforce: "privileged"},
			restore: `{"app.kubernetes.io/managed-by":null,"app.kubernetes.io/part-of":null,"pod-security.kubernetes.io/enforce":"privileged","pod-security.kubernetes.io/enforce-version":null,"scheduler.opsnorth.io/user":null}`},
		{name: "bound to the user: the record kept", labels: map[string]string{"scheduler.opsnorth.io/tenant": "bob", PodSecurityEnforce: "restricted"},
			annotations: map[string]string{AnnotationRestore: `{"pod-security.kubernetes.io/enforce":"baseline"}`},
			restore:     `{"pod-security.kubernetes.io/enforce":"baseline"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created, restore, err := Adoption("user-bob", "bob", tc.labels, tc.annotations)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.created, created)
			assert.Equal(t, tc.restore, restore)
		})
	}
}

func TestRestorePatch(t *testing.T) {
	patch, err := RestorePatch(`{"pod-security.kubernetes.io/enforce":"baseline","scheduler.opsnorth.io/user":null}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline","scheduler.opsnorth.io/user":null},
		"annotations":{"scheduler.opsnorth.io/restore-labels":null,"scheduler.opsnorth.io/applied-hash":null}}}`, string(patch))
	_, err = RestorePatch("not json")
	assert.ErrorContains(t, err, "annotation scheduler.opsnorth.io/restore-labels")
}

func TestClaimRetention(t *testing.T) {
	for _, tc := range []struct {
		storage  *v1alpha1.Storage
		policy   v1alpha1.ClaimRetention
		retained bool
	}{
		{&v1alpha1.Storage{}, v1alpha1.ClaimRetain, true},
		{&v1alpha1.Storage{WhenDeleted: v1alpha1.ClaimRetain}, v1alpha1.ClaimRetain, true},
		{&v1alpha1.Storage{WhenDeleted: v1alpha1.ClaimDelete}, v1alpha1.ClaimDelete, false},
	} {
		assert.Equal(t, tc.policy, ClaimPolicy(tc.storage))
		assert.Equal(t, tc.retained, Retained(map[string]string{AnnotationWhenDeleted: string(ClaimPolicy(tc.storage))}))
	}
	assert.True(t, Retained(nil), "a claim made before the policy existed is kept")
}
