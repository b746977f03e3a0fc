package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodHopsOf(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name    string
		stamp   func(st *stamps)
		taskOf  func(string) string
		want    []time.Duration
		wantErr bool
	}{{
		name: "chain: step k pod done to step k+1 pod added",
		stamp: func(st *stamps) {
			st.mark("c-s0", stagePodDone, at(1000))
			st.mark("c-s1", stagePodAdded, at(1200))
			st.mark("c-s1", stagePodDone, at(2500))
			st.mark("c-s2", stagePodAdded, at(2600))
		},
		taskOf: chainStepName,
		want:   []time.Duration{200 * time.Millisecond, 100 * time.Millisecond},
	}, {
		name: "workflow steps by the task names the watch saw",
		stamp: func(st *stamps) {
			st.mark("c-s0-abc-0", stagePodDone, at(0))
			st.mark("c-s1-def-0", stagePodAdded, at(1150))
			st.mark("c-s1-def-0", stagePodDone, at(2000))
			st.mark("c-s2-123-0", stagePodAdded, at(2050))
		},
		taskOf: lookup(map[string]string{"c/0": "c-s0-abc-0", "c/1": "c-s1-def-0", "c/2": "c-s2-123-0"}),
		want:   []time.Duration{1150 * time.Millisecond, 50 * time.Millisecond},
	}, {
		name: "a pod not seen",
		stamp: func(st *stamps) {
			st.mark("c-s0", stagePodDone, at(0))
			st.mark("c-s1", stagePodAdded, at(10))
		},
		taskOf:  chainStepName,
		wantErr: true,
	}, {
		name:    "a step's task not seen",
		stamp:   func(*stamps) {},
		taskOf:  lookup(nil),
		wantErr: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStamps()
			tt.stamp(st)
			got, err := podHopsOf(st, []string{"c"}, 3, tt.taskOf)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// lookup makes a map usable as a taskOf function.
func lookup(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestChainStepName(t *testing.T) {
	assert.Equal(t, "bc-x-00001-s3", chainStepName(stepKey("bc-x-00001", 3)))
	job := floorChainJob("bfc-r-00002", "r", 4)
	assert.Equal(t, "bfc-r-00002-s4", job.Name)
	assert.Equal(t, "bfc-r-00002", job.Spec.Template.Labels[chainLabel])
	assert.Equal(t, "4", job.Spec.Template.Labels[chainStepLabel])
	assert.Equal(t, "r", job.Spec.Template.Labels[RunLabel])
	assert.Equal(t, BaselineNamespace, job.Namespace)
	assert.Empty(t, job.OwnerReferences)
}

func TestPodFinished(t *testing.T) {
	early := metav1.NewTime(time.Date(2026, 12, 3, 17, 0, 1, 0, time.UTC))
	late := metav1.NewTime(early.Add(time.Second))
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: late}}},
		{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: early}}},
	}}}
	assert.Equal(t, late, podFinished(pod))
	now := podFinished(&corev1.Pod{})
	assert.False(t, now.IsZero(), "now when the pod does not say")
}
