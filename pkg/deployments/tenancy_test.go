package deployments_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestTenantBindingAndTier: without the admission policy the manager itself
// refuses a UserDeployment whose namespace is bound to another user, and a
// tier above what the bound namespace allows; nothing of either is created.
// An unbound namespace (the backend's) may ask for any user and tier.
func TestTenantBindingAndTier(t *testing.T) {
	c := newClient(t)
	alice := userID("alice")
	bound := map[string]*corev1.Namespace{
		"default max": {ObjectMeta: metav1.ObjectMeta{Name: "bound-" + rand.String(6), Labels: map[string]string{labelkeys.Tenant: alice}}},
		"pro max": {ObjectMeta: metav1.ObjectMeta{Name: "bound-" + rand.String(6),
			Labels: map[string]string{labelkeys.Tenant: alice, labelkeys.MaxTier: "pro"}}},
	}
	watched := []string{newNamespace(t, c)}
	for _, ns := range bound {
		require.NoError(t, c.Create(t.Context(), ns))
		watched = append(watched, ns.Name)
	}
	backend := watched[0]
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), watched[0]+","+watched[1]+","+watched[2])

	for _, tc := range []struct {
		name, ns, user, tier string
		reason, message      string // empty: provisioned
	}{
		{name: "own", ns: bound["default max"].Name, user: alice, tier: "free"},
		{name: "spoof", ns: bound["default max"].Name, user: "bob-x", tier: "free", reason: "TenantMismatch",
			message: `spec.userId: "bob-x" is not "` + alice + `", the user namespace ` + bound["default max"].Name +
				` is bound to (label scheduler.opsnorth.io/tenant)`},
		{name: "self-granted", ns: bound["default max"].Name, user: alice, tier: "pro", reason: "TierNotAllowed",
			message: `spec.tier: tier "pro" is above "free", the most generous tier allowed (--default-max-tier, namespace ` +
				bound["default max"].Name + ` has no scheduler.opsnorth.io/max-tier label)`},
		{name: "within", ns: bound["pro max"].Name, user: alice, tier: "pro"},
		{name: "above", ns: bound["pro max"].Name, user: alice, tier: "enterprise", reason: "TierNotAllowed",
			message: `spec.tier: tier "enterprise" is above "pro", the most generous tier allowed (label scheduler.opsnorth.io/max-tier of namespace ` +
				bound["pro max"].Name + `)`},
		{name: "backend", ns: backend, user: userID("carol"), tier: "enterprise"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ud := rawUD(tc.ns, tc.name, tc.user)
			ud.Spec.Tier = tc.tier
			require.NoError(t, c.Create(t.Context(), ud))
			if tc.reason == "" {
				got := waitPhase(t, c, tc.ns, tc.name, v1alpha1.PhaseProvisioning)
				assert.Empty(t, got.Status.LastError)
				return
			}
			got := waitPhase(t, c, tc.ns, tc.name, v1alpha1.PhaseError)
			assert.Equal(t, tc.message, got.Status.LastError)
			assert.Equal(t, "True/"+tc.reason+": "+tc.message, condition(got, v1alpha1.ConditionStalled))
		})
	}
	t.Run("nothing of the refused", func(t *testing.T) {
		assert.Empty(t, managedObjects(t, c, "bob-x"), "no namespace or child for the spoofed user")
	})
}
