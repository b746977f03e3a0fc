package refusal_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"opsnorth.io/scheduler/pkg/refusal"
	"opsnorth.io/scheduler/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.RunMain(m, testenv.WithoutThirdPartyCRDs()) }

// TestOfRealRefusals provokes each refusal of the table from the real API
// server and classifies what it answered.
func TestOfRealRefusals(t *testing.T) {
	env := testenv.Require(t)
	kube := kubernetes.NewForConfigOrDie(env.Config)
	ctx := t.Context()
	ns := namespace(t, kube, "refusal", nil)
	restricted := namespace(t, kube, "refusal-restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	quota(t, kube, ns)
	denyPolicy(t, kube)
	stranger := strangerClient(t, env)
	gone := namespace(t, kube, "refusal-gone", nil)
	// No namespace controller runs here: a deleted namespace stays Terminating.
	require.NoError(t, kube.CoreV1().Namespaces().Delete(ctx, gone, metav1.DeleteOptions{}))
	httpClient, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	mapper, err := apiutil.NewDynamicRESTMapper(env.Config, httpClient)
	require.NoError(t, err)
	cl, err := client.New(env.Config, client.Options{Mapper: mapper})
	require.NoError(t, err)

	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	create := func(ns string, obj *corev1.ConfigMap) error {
		_, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{})
		return err
	}
	existing, err := kube.CoreV1().ConfigMaps(restricted).Create(ctx, cm("existing"), metav1.CreateOptions{})
	require.NoError(t, err)

	tests := []struct {
		name     string
		provoke  func() error
		terminal bool
		reason   string
		message  string
	}{
		{
			name:     "invalid name",
			provoke:  func() error { return create(ns, cm("Not_A_Name")) },
			terminal: true, reason: refusal.ReasonInvalid, message: "a lowercase RFC 1123 subdomain",
		},
		{
			name: "namespace of the object and the request differ",
			provoke: func() error {
				obj := cm("elsewhere")
				obj.Namespace = "default"
				return create(ns, obj)
			},
			terminal: true, reason: refusal.ReasonBadRequest, message: "does not match the namespace",
		},
		{
			name: "request over the size limit",
			provoke: func() error {
				obj := cm("huge")
				obj.Data = map[string]string{"a": strings.Repeat("x", 4<<20)}
				return create(ns, obj)
			},
			terminal: true, reason: refusal.ReasonTooLarge, message: "too large",
		},
		{
			name: "denied by a ValidatingAdmissionPolicy",
			provoke: func() error {
				obj := cm("denied")
				obj.Labels = map[string]string{"refusal.opsnorth.io/deny": "true"}
				return create(ns, obj)
			},
			terminal: true, reason: refusal.ReasonAdmissionDenied, message: "denied request: refused by the test policy",
		},
		{
			name: "denied by Pod Security",
			provoke: func() error {
				_, err := kube.CoreV1().Pods(restricted).Create(ctx, pod("root", nil), metav1.CreateOptions{})
				return err
			},
			terminal: true, reason: refusal.ReasonAdmissionDenied, message: `violates PodSecurity "restricted:latest"`,
		},
		{
			name: "a quota needs a limit the object does not set",
			provoke: func() error {
				_, err := kube.CoreV1().Pods(ns).Create(ctx, pod("nolimits", nil), metav1.CreateOptions{})
				return err
			},
			terminal: true, reason: refusal.ReasonAdmissionDenied, message: "failed quota: q: must specify limits.cpu",
		},
		{
			name:    "quota exceeded",
			provoke: func() error { return create(ns, cm("one-too-many")) },
			reason:  refusal.ReasonQuotaExceeded, message: "exceeded quota: q",
		},
		{
			name:    "namespace terminating",
			provoke: func() error { return create(gone, cm("late")) },
			reason:  refusal.ReasonNamespaceTerminating, message: "because it is being terminated",
		},
		{
			name: "RBAC",
			provoke: func() error {
				_, err := stranger.CoreV1().ConfigMaps(ns).Create(ctx, cm("nope"), metav1.CreateOptions{})
				return err
			},
			reason: refusal.ReasonForbidden, message: `User "stranger" cannot create resource "configmaps"`,
		},
		{
			name:    "namespace missing",
			provoke: func() error { return create("refusal-no-such-namespace", cm("x")) },
			reason:  refusal.ReasonNotFound, message: `namespaces "refusal-no-such-namespace" not found`,
		},
		{
			name:    "already exists",
			provoke: func() error { return create(restricted, cm("existing")) },
			reason:  refusal.ReasonConflict, message: "already exists",
		},
		{
			name: "stale resourceVersion",
			provoke: func() error {
				stale := existing.DeepCopy()
				stale.ResourceVersion = "1"
				_, err := kube.CoreV1().ConfigMaps(restricted).Update(ctx, stale, metav1.UpdateOptions{})
				return err
			},
			reason: refusal.ReasonConflict, message: "the object has been modified",
		},
		{
			name: "kind not installed",
			provoke: func() error {
				u := &unstructured.Unstructured{}
				u.SetAPIVersion("nope.opsnorth.io/v1")
				u.SetKind("Nope")
				u.SetName("x")
				u.SetNamespace(ns)
				return cl.Create(ctx, u)
			},
			reason: refusal.ReasonKindNotInstalled, message: "no matches for nope.opsnorth.io/v1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.provoke()
			require.Error(t, err)
			got := refusal.Of(fmt.Errorf("wrapped: %w", err))
			assert.Equal(t, tt.terminal, got.Terminal, "%v", err)
			assert.Equal(t, tt.reason, got.Reason, "%v", err)
			assert.Contains(t, got.Message, tt.message)
		})
	}
}

// TestOf covers what the API server here cannot be made to answer on demand.
func TestOf(t *testing.T) {
	gr := schema.GroupResource{Group: "batch", Resource: "jobs"}
	tests := []struct {
		name     string
		err      error
		terminal bool
		reason   string
	}{
		{name: "nil", err: nil},
		{name: "admission webhook", err: apierrors.NewForbidden(gr, "j", errors.New(`admission webhook "policy.example.com" denied the request: no`)),
			terminal: true, reason: refusal.ReasonAdmissionDenied},
		{name: "throttled", err: apierrors.NewTooManyRequests("slow down", 1), reason: refusal.ReasonThrottled},
		{name: "internal", err: apierrors.NewInternalError(errors.New("etcd")), reason: refusal.ReasonAPIUnavailable},
		{name: "unavailable", err: apierrors.NewServiceUnavailable("later"), reason: refusal.ReasonAPIUnavailable},
		{name: "timeout", err: apierrors.NewTimeoutError("slow", 1), reason: refusal.ReasonAPIUnavailable},
		{name: "method", err: apierrors.NewMethodNotSupported(gr, "patch"), terminal: true, reason: refusal.ReasonMethodNotSupported},
		{name: "network", err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}},
		{name: "context", err: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := refusal.Of(tt.err)
			assert.Equal(t, tt.terminal, got.Terminal)
			assert.Equal(t, tt.reason, got.Reason)
		})
	}
}

func namespace(t *testing.T, kube kubernetes.Interface, prefix string, labels map[string]string) string {
	t.Helper()
	ns, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return ns.Name
}

// quota limits ConfigMaps to none and requires CPU
// limits on pods. No quota controller runs here, so its status is written by
// hand as the controller would.
func quota(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	hard := corev1.ResourceList{"count/configmaps": resource.MustParse("0"), corev1.ResourceLimitsCPU: resource.MustParse("1")}
	q, err := kube.CoreV1().ResourceQuotas(ns).Create(t.Context(), &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{"count/configmaps": resource.MustParse("0"), corev1.ResourceLimitsCPU: resource.MustParse("0")}}
	_, err = kube.CoreV1().ResourceQuotas(ns).UpdateStatus(t.Context(), q, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// denyPolicy refuses ConfigMaps labelled refusal.opsnorth.io/deny, and waits
// until the API server enforces it.
func denyPolicy(t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	name := "refusal-test-deny"
	_, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: `!has(object.metadata.labels) || !('refusal.opsnorth.io/deny' in object.metadata.labels)`,
				Message:    "refused by the test policy",
			}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	probe := namespace(t, kube, "refusal-probe", nil)
	require.Eventually(t, func() bool {
		_, err := kube.CoreV1().ConfigMaps(probe).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			GenerateName: "probe-", Labels: map[string]string{"refusal.opsnorth.io/deny": "true"},
		}}, metav1.CreateOptions{})
		return err != nil
	}, 30*time.Second, 100*time.Millisecond, "the policy is enforced")
}

func strangerClient(t *testing.T, env *testenv.Env) kubernetes.Interface {
	t.Helper()
	path, err := env.KubeconfigFor(t.TempDir(), "stranger")
	require.NoError(t, err)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	require.NoError(t, err)
	return kubernetes.NewForConfigOrDie(cfg)
}

func pod(name string, sc *corev1.SecurityContext) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", SecurityContext: sc}}},
	}
}
