package deployments_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestSecretKeysStayUnderTheUsersPrefix: keys are read under
// --secret-key-prefix; one that could leave it stalls the deployment before
// anything of it exists, and the CRD refuses '..' at admission.
func TestSecretKeysStayUnderTheUsersPrefix(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), ns, "--secret-key-prefix=tenants/{userId}/")
	user := userID("mia")
	userNS := "user-" + user
	prefix := "tenants/" + user + "/"

	dotDot := rawUD(ns, "dotdot", user)
	dotDot.Spec.Secrets = []v1alpha1.SecretReference{{Name: "DB", RemoteRef: v1alpha1.RemoteSecretReference{Key: "../bob/db"}}}
	err := c.Create(ctx, dotDot)
	require.True(t, apierrors.IsInvalid(err), "the CRD refuses '..': %v", err)
	assert.Contains(t, err.Error(), "spec.secrets[0].remoteRef.key")

	// A backslash passes admission; the manager refuses it.
	ud := rawUD(ns, "hello", user)
	ud.Spec.Secrets = []v1alpha1.SecretReference{
		{Name: "DB", RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Property: "url"}},
		{Name: "TOKEN", RemoteRef: v1alpha1.RemoteSecretReference{Key: `..\bob\token`}},
	}
	require.NoError(t, c.Create(ctx, ud))
	got := waitPhase(t, c, ns, "hello", v1alpha1.PhaseError)
	want := `spec.secrets[1].remoteRef.key: "..\\bob\\token" is not allowed under the user's prefix "` + prefix +
		`": character '\\' is refused (allowed: letters, digits and "_+=@.-/")`
	assert.Equal(t, want, got.Status.LastError)
	assert.Equal(t, "True/SecretKeyNotAllowed: "+want, condition(got, v1alpha1.ConditionStalled))
	assert.Contains(t, condition(got, v1alpha1.ConditionReady), "False/SecretKeyNotAllowed")
	_, err = getU(t, c, render.GVKNamespace, "", userNS)
	assert.True(t, apierrors.IsNotFound(err), "nothing of the deployment is created: %v", err)
	assert.Empty(t, managedObjects(t, c, user))

	// Fixing the key provisions, every key under the prefix.
	fixed := getUD(t, c, ns, "hello")
	fixed.Spec.Secrets[1].RemoteRef.Key = "token"
	require.NoError(t, c.Update(ctx, fixed))
	got = waitPhase(t, c, ns, "hello", v1alpha1.PhaseProvisioning)
	assert.Empty(t, got.Status.LastError)
	assert.Empty(t, condition(got, v1alpha1.ConditionStalled))
	es := waitObject(t, c, render.GVKExternalSecret, userNS, "hello-secrets", nil)
	assert.Equal(t, []string{"DB=" + prefix + "db#url", "TOKEN=" + prefix + "token"}, remoteRefs(es))
}

// remoteRefs lists an ExternalSecret's data as "secretKey=key[#property]"
// (the apiserver adds defaults to each remoteRef).
func remoteRefs(es *unstructured.Unstructured) []string {
	var out []string
	for _, d := range nested(es, "spec", "data").([]any) {
		d := d.(map[string]any)
		ref := d["remoteRef"].(map[string]any)
		s := fmt.Sprintf("%s=%s", d["secretKey"], ref["key"])
		if p, ok := ref["property"]; ok {
			s += fmt.Sprintf("#%s", p)
		}
		out = append(out, s)
	}
	return out
}
