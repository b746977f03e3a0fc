package deployments

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
)

func TestCheckHosts(t *testing.T) {
	const host = "app.apps.example.com"
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	mk := func(ns string, created metav1.Time, holds bool) *v1alpha1.UserDeployment {
		ud := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app", UID: types.UID(ns), CreationTimestamp: created},
			Spec: v1alpha1.UserDeploymentSpec{UserID: "u", Image: "img", ContainerPort: ptr.To[int32](80), DesiredState: v1alpha1.DesiredRunning}}
		if holds {
			ud.Status.Ingresses = []v1alpha1.IngressStatus{{Service: "app", Host: host}}
		}
		return ud
	}
	tests := []struct {
		name     string
		me       *v1alpha1.UserDeployment
		other    *v1alpha1.UserDeployment
		conflict bool
	}{
		{name: "free host", me: mk("a", t1, false), other: nil},
		{name: "held by another", me: mk("a", t0, false), other: mk("b", t1, true), conflict: true},
		{name: "both hold, the other is older", me: mk("a", t1, true), other: mk("b", t0, true), conflict: true},
		{name: "both hold, I am older", me: mk("a", t0, true), other: mk("b", t1, true)},
		{name: "holder is being deleted", me: mk("a", t1, false), other: func() *v1alpha1.UserDeployment {
			o := mk("b", t0, true)
			o.Spec.DesiredState = v1alpha1.DesiredDeleted
			return o
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uds := []*v1alpha1.UserDeployment{tt.me}
			if tt.other != nil {
				uds = append(uds, tt.other)
			}
			r := indexedReconciler(t, uds...)
			r.cfg.Domain = "apps.example.com"
			services, err := render.Services(tt.me, nil)
			require.NoError(t, err)
			s := &scope{ud: tt.me, app: &render.App{UD: tt.me, Services: services}}
			stop, err := r.checkHosts(t.Context(), s)
			require.NoError(t, err)
			assert.Equal(t, tt.conflict, stop)
			if tt.conflict {
				assert.Equal(t, v1alpha1.PhaseError, s.status.Phase)
				assert.Equal(t, "host already in use: "+host+" (used by b/app)", s.status.LastError)
				assert.Empty(t, s.app.Hosts)
				assert.Equal(t, hostConflictRetry, s.requeue, "the holder may let go: look again")
			} else {
				assert.Equal(t, host, s.app.Hosts[0].Host)
				assert.Zero(t, s.requeue)
			}
		})
	}
}
