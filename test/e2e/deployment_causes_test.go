//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/localcluster/provisioner"
)

// TestUserDeploymentCauses: an app that cannot come up stays provisioning
// with what blocks it, per service, within seconds, and becomes ready by
// itself once the cause goes.
func TestUserDeploymentCauses(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000
	tests := []struct {
		name     string
		service  v1alpha1.TemplateService
		reason   string
		contains string
		// heal removes the cause; nil: the cause is only reported.
		heal func(t *testing.T, ns, name string)
	}{
		{
			name:    "image pull",
			service: v1alpha1.TemplateService{Name: "web", Image: "unreachable.invalid/web:1"},
			reason:  deployments.ReasonImagePullFailed, contains: "lookup unreachable.invalid: no such host",
			heal: func(t *testing.T, _, name string) {
				_, err := cs.SchedulerV1alpha1().DeploymentTemplates().Patch(t.Context(), name, types.MergePatchType,
					[]byte(`{"spec":{"services":[{"name":"web","image":"ghcr.io/opsnorth/web:1"}]}}`), metav1.PatchOptions{})
				require.NoError(t, err)
			},
		},
		{
			name: "crash loop",
			// Its env is in a ConfigMap, out of the kwok stage's sight; a
			// shell exit is what the stage reads (scripts/kwok-stages).
			service: v1alpha1.TemplateService{Name: "worker", Image: "ghcr.io/opsnorth/worker:1",
				Command: []string{"sh", "-c", "work; exit 3"}},
			reason: deployments.ReasonCrashLooping, contains: "last exit code 3",
		},
		{
			name: "claim of a missing StorageClass",
			service: v1alpha1.TemplateService{Name: "db", Image: "ghcr.io/opsnorth/db:1",
				Storage: &v1alpha1.Storage{Size: resource.MustParse("1Gi"), MountPath: "/data",
					StorageClassName: ptr.To(fmt.Sprintf("e2e-%d-fast", stamp))}},
			reason: deployments.ReasonClaimPending, contains: fmt.Sprintf(`storageclass.storage.k8s.io "e2e-%d-fast" not found`, stamp),
			heal: func(t *testing.T, _, _ string) {
				class := fmt.Sprintf("e2e-%d-fast", stamp)
				_, err := c.Clientset.StorageV1().StorageClasses().Create(t.Context(), &storagev1.StorageClass{
					ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: provisioner.Name,
					VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
				}, metav1.CreateOptions{})
				require.NoError(t, err)
				t.Cleanup(func() {
					_ = c.Clientset.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
				})
			},
		},
		{
			// The free tier's quota allows 1 CPU of requests: the second
			// replica's pod is refused by the ResourceQuota admission.
			name: "quota refuses a replica",
			service: v1alpha1.TemplateService{Name: "api", Image: "ghcr.io/opsnorth/api:1", Replicas: ptr.To(int32(2)),
				Resources: &v1alpha1.ResourceRequirements{
					Requests: &v1alpha1.ResourceAmounts{CPU: ptr.To(resource.MustParse("600m"))},
					Limits:   &v1alpha1.ResourceAmounts{CPU: ptr.To(resource.MustParse("600m"))}}},
			reason: "QuotaExceeded", contains: "exceeded quota",
			heal: func(t *testing.T, ns, name string) {
				_, err := cs.SchedulerV1alpha1().UserDeployments(ns).Patch(t.Context(), name, types.MergePatchType,
					[]byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{})
				require.NoError(t, err)
			},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t, c)
			name := fmt.Sprintf("e2e-%d-cause-%d", stamp, i)
			_, err := cs.SchedulerV1alpha1().DeploymentTemplates().Create(t.Context(), &v1alpha1.DeploymentTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec:       v1alpha1.DeploymentTemplateSpec{Services: []v1alpha1.TemplateService{tt.service}},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
			t.Cleanup(func() {
				_ = cs.SchedulerV1alpha1().DeploymentTemplates().Delete(context.Background(), name, metav1.DeleteOptions{})
			})
			userNS := "user-e2e-" + name
			t.Cleanup(func() {
				_ = c.Clientset.CoreV1().Namespaces().Delete(context.Background(), userNS, metav1.DeleteOptions{})
			})
			created := time.Now()
			_, err = cs.SchedulerV1alpha1().UserDeployments(ns).Create(t.Context(), &v1alpha1.UserDeployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       v1alpha1.UserDeploymentSpec{UserID: "e2e-" + name, Template: name},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
			t.Cleanup(func() { // before its template and namespaces go
				_ = cs.SchedulerV1alpha1().UserDeployments(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
			})

			ready := waitUD(t, ns, name, func(ud *v1alpha1.UserDeployment, ready *metav1.Condition) bool {
				return ready != nil && ready.Reason == tt.reason
			})
			t.Logf("%s: %s after %s: %s", name, ready.Reason, time.Since(created).Round(time.Millisecond), ready.Message)
			assert.Less(t, time.Since(created), 3*seesWithin, "seen within seconds of the pods being created")
			assert.Equal(t, metav1.ConditionFalse, ready.Status)
			assert.Contains(t, ready.Message, "service "+tt.service.Name+":")
			assert.Contains(t, ready.Message, tt.contains)
			if tt.heal == nil {
				return
			}
			healed := time.Now()
			tt.heal(t, ns, name)
			waitUD(t, ns, name, func(ud *v1alpha1.UserDeployment, ready *metav1.Condition) bool {
				return ud.Status.Phase == v1alpha1.PhaseReady && ready != nil && ready.Status == metav1.ConditionTrue
			})
			t.Logf("%s: ready %s after the cause went", name, time.Since(healed).Round(time.Millisecond))
		})
	}
}

// waitUD waits until done holds for the UserDeployment and its Ready
// condition, and returns that condition.
func waitUD(t *testing.T, ns, name string, done func(*v1alpha1.UserDeployment, *metav1.Condition) bool) *metav1.Condition {
	t.Helper()
	cs := scheduler(t, requireCluster(t))
	var ready *metav1.Condition
	var last string
	if !assert.Eventually(t, func() bool {
		ud, err := cs.SchedulerV1alpha1().UserDeployments(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		ready = meta.FindStatusCondition(ud.Status.Conditions, v1alpha1.ConditionReady)
		if ready != nil {
			last = string(ud.Status.Phase) + " " + ready.Reason + ": " + ready.Message
		}
		return done(ud, ready)
	}, 2*timeout, tick) {
		t.Fatalf("UserDeployment %s/%s; last seen %s", ns, name, last)
	}
	return ready
}
