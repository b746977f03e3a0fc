package manager

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestLastWrites(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	version := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: rv}}
	}
	var l LastWrites[*corev1.ConfigMap]

	got, ok := l.Latest(key, version("1"))
	assert.False(t, ok, "nothing written")
	assert.Equal(t, "1", got.ResourceVersion)

	l.Store(key, "1", version("2"))
	got, ok = l.Latest(key, version("1"))
	assert.True(t, ok, "the cache still serves the replaced version")
	assert.Equal(t, "2", got.ResourceVersion)

	got, ok = l.Latest(key, version("3"))
	assert.False(t, ok, "the cache moved on")
	assert.Equal(t, "3", got.ResourceVersion)
	_, ok = l.Latest(key, version("1"))
	assert.False(t, ok, "the write was forgotten once the cache moved on")

	l.Store(key, "3", version("4"))
	l.Forget(key)
	_, ok = l.Latest(key, version("3"))
	assert.False(t, ok, "forgotten")
}
