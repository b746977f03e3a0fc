package testkit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DenyCreate makes the API server refuse, with message, every create of
// resource (in group, any version) in namespace ("" for all) for which the
// CEL expression over object is false: a ValidatingAdmissionPolicy and its
// binding, removed when the test ends. probe is an object the policy refuses; DenyCreate
// returns once a dry-run create of it is refused.
func DenyCreate(t *testing.T, c client.Client, namespace, group, resourceName, expression, message string, probe client.Object) {
	t.Helper()
	name := "deny-" + namespace + "-" + resourceName
	var namespaces *metav1.LabelSelector
	if namespace != "" {
		namespaces = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}}
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: namespaces,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resourceName},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: expression, Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		require.NoError(t, c.Create(t.Context(), obj))
		t.Cleanup(func() { _ = c.Delete(t.Context(), obj) })
	}
	require.Eventually(t, func() bool {
		return c.Create(t.Context(), probe.DeepCopyObject().(client.Object), client.DryRunAll) != nil
	}, time.Minute, 100*time.Millisecond, "policy %s is never enforced", name)
}

// SetQuota allows n objects of the counted resource (e.g. "count/jobs.batch")
// in namespace, creating or updating the ResourceQuota "test-quota". No quota
// controller runs under envtest, so its status is written as the controller
// would, with nothing used.
func SetQuota(t *testing.T, c client.Client, namespace string, counted corev1.ResourceName, n int64) {
	t.Helper()
	hard := corev1.ResourceList{counted: *resource.NewQuantity(n, resource.DecimalSI)}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "test-quota", Namespace: namespace}}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(q), q); err != nil {
		q.Spec.Hard = hard
		require.NoError(t, c.Create(t.Context(), q))
	} else {
		q.Spec.Hard = hard
		require.NoError(t, c.Update(t.Context(), q))
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{counted: resource.MustParse("0")}}
	require.NoError(t, c.Status().Update(t.Context(), q))
}
