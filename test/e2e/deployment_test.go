//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func deployment(namespace, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:e2e"}}},
			},
		},
	}
}

func TestDeploymentAvailableThenCollected(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	created := time.Now()
	_, err := c.Clientset.AppsV1().Deployments(ns).Create(t.Context(), deployment(ns, "web", 2), metav1.CreateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		d, err := c.Clientset.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
				return d.Status.AvailableReplicas == 2 && d.Status.ReadyReplicas == 2
			}
		}
		return false
	}, timeout, tick, "deployment web never Available with 2 replicas")
	t.Logf("Deployment create → Available (2 replicas): %s", time.Since(created).Round(time.Millisecond))

	pods, err := c.Clientset.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	require.NoError(t, err)
	require.Len(t, pods.Items, 2)
	for _, p := range pods.Items {
		assert.Equal(t, corev1.PodRunning, p.Status.Phase, p.Name)
	}
	rss, err := c.Clientset.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	require.NoError(t, err)
	require.Len(t, rss.Items, 1)

	deleted := time.Now()
	require.NoError(t, c.Clientset.AppsV1().Deployments(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		rss, err := c.Clientset.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(rss.Items) != 0 {
			return false
		}
		pods, err := c.Clientset.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0
	}, timeout, tick, "the garbage collector removes the ReplicaSet and its pods")
	t.Logf("Deployment delete → ReplicaSet and pods gone: %s", time.Since(deleted).Round(time.Millisecond))
}
