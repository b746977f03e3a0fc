package deployments

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// TestPodNews: the handler's adapter hands podcause.Changed (table-tested
// in its package) the pods it gets, a missing one as nil.
func TestPodNews(t *testing.T) {
	pending := makePod("p").obj()
	pulling := makePod("p").waiting("ErrImagePull", pullMsg).obj()
	assert.True(t, podNews(nil, object(pulling)), "created with a cause")
	assert.False(t, podNews(nil, object(pending)), "created without a cause")
	assert.True(t, podNews(object(pending), object(pulling)), "cause appears")
	assert.True(t, podNews(object(pulling), nil), "deleted with a cause")
	assert.False(t, podNews(object(pending), nil), "deleted without a cause")
}

// object is p as the handler gets it: no object is a nil interface.
func object(p *corev1.Pod) client.Object {
	if p == nil {
		return nil
	}
	return p
}

func TestTellingEvent(t *testing.T) {
	at := func(ev *corev1.Event, s int) *corev1.Event {
		ev.LastTimestamp = metav1.NewTime(time.Unix(1000+int64(s), 0))
		return ev
	}
	oldWarn := at(claimEvent("Warning", "ProvisioningFailed", "old"), 1)
	newWarn := at(claimEvent("Warning", "ProvisioningFailed", "new"), 3)
	waiting := at(claimEvent("Normal", "ExternalProvisioning", "waiting for a volume to be created"), 5)
	series := claimEvent("Normal", "Provisioning", "series")
	series.Series = &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(time.Unix(1009, 0))}

	assert.Nil(t, tellingEvent(nil))
	assert.Equal(t, "new", tellingEvent([]*corev1.Event{newWarn, oldWarn, waiting}).Message, "the latest Warning before later Normal ones")
	assert.Equal(t, "series", tellingEvent([]*corev1.Event{waiting, series}).Message, "the latest, by its series")

	trimmed, err := trimEvent(&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "n", Annotations: map[string]string{"a": "b"}},
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", Name: "c", UID: "u", Namespace: "n"},
		Type:           "Warning", Reason: "ProvisioningFailed", Message: strings.Repeat("m", 2000), Count: 7,
		Source: corev1.EventSource{Component: "persistentvolume-controller"}, LastTimestamp: newWarn.LastTimestamp})
	require.NoError(t, err)
	ev := trimmed.(*corev1.Event)
	assert.Equal(t, corev1.ObjectReference{Name: "c", UID: "u"}, ev.InvolvedObject)
	assert.Equal(t, "n/c", must(claimEventKey(ev))[0])
	assert.Equal(t, maxCauseMessage, len(ev.Message), "cut to the bound, mark included")
	assert.Empty(t, ev.Annotations)
	assert.Zero(t, ev.Count)
	assert.Equal(t, newWarn.LastTimestamp, ev.LastTimestamp)
}

func TestTrimPod(t *testing.T) {
	p := makePod("p").crashed(3, 1, "Error", "boom", backOff).unschedulable(schedMsg).obj()
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	p.Annotations = map[string]string{"big": strings.Repeat("x", 1000)}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
	o, err := trimPod(p)
	require.NoError(t, err)
	got := o.(*corev1.Pod)
	assert.Equal(t, map[string]string{labelkeys.UserDeployment: "apps.shop", labelkeys.Service: "web"}, got.Labels)
	assert.Equal(t, "user-u1/apps.shop/web", must(podServiceKey(got))[0])
	assert.Empty(t, got.Annotations)
	assert.Empty(t, got.ManagedFields)
	assert.Empty(t, got.Spec.Containers)
	assert.Len(t, got.Status.Conditions, 1, "only PodScheduled=False")
	cs := got.Status.ContainerStatuses[0]
	assert.Empty(t, cs.Image)
	assert.Empty(t, cs.ContainerID)
	assert.Equal(t, int32(3), cs.RestartCount)
	assert.Equal(t, "boom", cs.LastTerminationState.Terminated.Message)
	assert.True(t, cs.LastTerminationState.Terminated.FinishedAt.IsZero(), "no times")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
