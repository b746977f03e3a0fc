package deployments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestOlderAndReleasing(t *testing.T) {
	early := metav1.NewTime(metav1.Now().Add(-60e9))
	a := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "a", CreationTimestamp: early}}
	b := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "b", CreationTimestamp: metav1.Now()}}
	assert.True(t, older(a, b))
	assert.False(t, older(b, a))
	c := b.DeepCopy()
	c.Name, c.CreationTimestamp = "c", a.CreationTimestamp
	assert.True(t, older(a, c), "same time: ordered by key")
	assert.False(t, releasing(a))
	a.Spec.DesiredState = v1alpha1.DesiredDeleted
	assert.True(t, releasing(a))
}
