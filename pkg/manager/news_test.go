package manager_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/pkg/manager"
)

// TestNewsHandler: an event is enqueued, as what the object maps to, only
// when news says it can change that object's status; news sees nil for the
// missing side of a creation or deletion.
func TestNewsHandler(t *testing.T) {
	pod := func(phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Status: corev1.PodStatus{Phase: phase}}
	}
	owner := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "owner"}}
	var seen [][2]bool // which sides news saw
	news := func(old, obj client.Object) bool {
		seen = append(seen, [2]bool{old != nil, obj != nil})
		// News: a phase change, or a pod appearing or going.
		a, b := phaseOf(old), phaseOf(obj)
		return a != b
	}
	h := manager.NewsHandler(func(client.Object) []reconcile.Request { return []reconcile.Request{owner} }, news)
	for _, tc := range []struct {
		name     string
		send     func(q workqueue.TypedRateLimitingInterface[reconcile.Request])
		enqueued bool
		sides    [2]bool
	}{
		{"created", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(t.Context(), event.CreateEvent{Object: pod(corev1.PodPending)}, q)
		}, true, [2]bool{false, true}},
		{"updated without news", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(t.Context(), event.UpdateEvent{ObjectOld: pod(corev1.PodPending), ObjectNew: pod(corev1.PodPending)}, q)
		}, false, [2]bool{true, true}},
		{"updated with news", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(t.Context(), event.UpdateEvent{ObjectOld: pod(corev1.PodPending), ObjectNew: pod(corev1.PodRunning)}, q)
		}, true, [2]bool{true, true}},
		{"deleted", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(t.Context(), event.DeleteEvent{Object: pod(corev1.PodRunning)}, q)
		}, true, [2]bool{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			seen = nil
			tc.send(q)
			assert.Equal(t, [][2]bool{tc.sides}, seen)
			if !tc.enqueued {
				assert.Zero(t, q.Len())
				return
			}
			assert.Equal(t, 1, q.Len())
			got, _ := q.Get()
			assert.Equal(t, owner, got)
		})
	}
}

func phaseOf(obj client.Object) corev1.PodPhase {
	if p, ok := obj.(*corev1.Pod); ok {
		return p.Status.Phase
	}
	return "gone"
}
