//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// TestDeleteKeepsOthersData: the last app of a user is deleted while its
// namespace holds a Secret the manager never created (counted by the real
// quota controller, as the manager reads no Secret) and the app's volume
// claim (storage.whenDeleted defaults to Retain). The namespace, the Secret
// and the claim stay; the app's other children go; an Event says why.
func TestDeleteKeepsOthersData(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	ns := newNamespace(t, c)
	name := fmt.Sprintf("e2e-%d-keep", time.Now().Unix()%100000)
	tmpl := &v1alpha1.DeploymentTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.DeploymentTemplateSpec{Services: []v1alpha1.TemplateService{{
			Name: "db", Image: "ghcr.io/opsnorth/db:1",
			Storage: &v1alpha1.Storage{Size: resource.MustParse("1Gi"), MountPath: "/var/lib/db"},
		}}}}
	_, err := cs.SchedulerV1alpha1().DeploymentTemplates().Create(t.Context(), tmpl, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.SchedulerV1alpha1().DeploymentTemplates().Delete(t.Context(), name, metav1.DeleteOptions{})
	})
	ud := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.UserDeploymentSpec{UserID: "e2e-" + name, Template: name}}
	_, err = cs.SchedulerV1alpha1().UserDeployments(ns).Create(t.Context(), ud, metav1.CreateOptions{})
	require.NoError(t, err)
	userNS := "user-e2e-" + name
	claim := name + "-db-data"
	require.Eventually(t, func() bool {
		_, err := c.Clientset.CoreV1().PersistentVolumeClaims(userNS).Get(t.Context(), claim, metav1.GetOptions{})
		return err == nil
	}, timeout, tick, "claim %s/%s", userNS, claim)
	require.Eventually(t, func() bool { // quota admission refuses Secrets until the inventory counts them
		_, err = c.Clientset.CoreV1().Secrets(userNS).Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "db-password"}, StringData: map[string]string{"password": "s3cret"}}, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err)
	}, timeout, tick, "create a Secret in %s: %v", userNS, err)

	require.NoError(t, cs.SchedulerV1alpha1().UserDeployments(ns).Delete(t.Context(), name, metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := cs.SchedulerV1alpha1().UserDeployments(ns).Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "UserDeployment %s stuck in deletion", name)
	note := waitNote(t, c, ns, name, "NamespaceKept")
	assert.Equal(t, "every child removed except the retained volume claims "+claim+"; namespace "+userNS+
		" kept: it holds objects the manager did not create: 1 Secret; it holds retained volume claims (storage.whenDeleted: Retain): "+claim, note)

	got, err := c.Clientset.CoreV1().Namespaces().Get(t.Context(), userNS, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, got.DeletionTimestamp, "the namespace is kept")
	secret, err := c.Clientset.CoreV1().Secrets(userNS).Get(t.Context(), "db-password", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "s3cret", string(secret.Data["password"]))
	_, err = c.Clientset.CoreV1().PersistentVolumeClaims(userNS).Get(t.Context(), claim, metav1.GetOptions{})
	require.NoError(t, err, "the retained claim is kept")
	require.Eventually(t, func() bool {
		_, err := c.Clientset.AppsV1().Deployments(userNS).Get(t.Context(), name+"-db", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the app's Deployment is removed")
	t.Cleanup(func() { _ = c.Clientset.CoreV1().Namespaces().Delete(t.Context(), userNS, metav1.DeleteOptions{}) })
}

// waitNote waits for an Event about the object name in ns with reason and
// returns its note.
func waitNote(t *testing.T, c *localcluster.Cluster, ns, name, reason string) string {
	t.Helper()
	var note string
	require.Eventually(t, func() bool {
		list, err := c.Clientset.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Reason == reason {
				note = e.Note
				return true
			}
		}
		return false
	}, timeout, tick, "event %s about %s/%s", reason, ns, name)
	return note
}
