package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/localcluster/provisioner"
)

func TestDefaultStorageClass(t *testing.T) {
	c := liveCluster(t)
	sc, err := c.Clientset.StorageV1().StorageClasses().Get(t.Context(), provisioner.DefaultClassName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "true", sc.Annotations["storageclass.kubernetes.io/is-default-class"])
	assert.Equal(t, provisioner.Name, sc.Provisioner)
	assert.Equal(t, storagev1.VolumeBindingWaitForFirstConsumer, *sc.VolumeBindingMode)
	assert.Equal(t, corev1.PersistentVolumeReclaimDelete, *sc.ReclaimPolicy)
}

// TestClaimsBind checks a claim's life on the default StorageClass, and on a
// Retain one: Pending until a pod uses it, then bound to a new host-path
// volume in the cluster's directory while the pod runs on the kwok node;
// deleting the claim deletes the volume and its directory, unless Retain.
func TestClaimsBind(t *testing.T) {
	c := liveCluster(t)
	ns := testNamespace(t, c)
	retain := provisioner.DefaultClass()
	retain.Name, retain.Annotations = "local-path-retain", nil
	retain.ReclaimPolicy = new(corev1.PersistentVolumeReclaimRetain)
	_, err := c.Clientset.StorageV1().StorageClasses().Create(t.Context(), retain, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Clientset.StorageV1().StorageClasses().Delete(context.Background(), retain.Name, metav1.DeleteOptions{})
	})
	tests := []struct {
		name      string
		class     *string
		wantClass string
		wantKept  bool
	}{
		{"no storageClassName: the default class, volume deleted with the claim", nil, provisioner.DefaultClassName, false},
		{"a Retain class keeps the volume and its directory", &retain.Name, retain.Name, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			claims := c.Clientset.CoreV1().PersistentVolumeClaims(ns)
			claim := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("data-%d", i)},
				Spec: corev1.PersistentVolumeClaimSpec{
					StorageClassName: tt.class,
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}
			created, err := claims.Create(t.Context(), claim, metav1.CreateOptions{})
			require.NoError(t, err)
			assert.Equal(t, tt.wantClass, *created.Spec.StorageClassName)

			// Unused, the claim waits for its first consumer.
			require.Eventually(t, func() bool {
				events, err := c.Clientset.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + claim.Name})
				return err == nil && slices.ContainsFunc(events.Items, func(e corev1.Event) bool { return e.Reason == "WaitForFirstConsumer" })
			}, liveTimeout, pollInterval, "claim %s never said it waits for its first consumer", claim.Name)
			got, err := claims.Get(t.Context(), claim.Name, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, corev1.ClaimPending, got.Status.Phase)

			pod := testPod(ns, fmt.Sprintf("uses-data-%d", i), nil)
			pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name},
			}}}
			pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			started := time.Now()
			_, err = c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				got, err = claims.Get(t.Context(), claim.Name, metav1.GetOptions{})
				return err == nil && got.Status.Phase == corev1.ClaimBound
			}, liveTimeout, pollInterval, "claim %s never bound", claim.Name)
			t.Logf("claim bound %s after its pod was created", time.Since(started).Round(time.Millisecond))
			running := watchPod(t, c, ns, pod.Name, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
			t.Logf("pod running %s after it was created", time.Since(started).Round(time.Millisecond))
			assert.Equal(t, NodeName, running.Spec.NodeName)

			pv, err := c.Clientset.CoreV1().PersistentVolumes().Get(t.Context(), got.Spec.VolumeName, metav1.GetOptions{})
			require.NoError(t, err)
			dir := filepath.Join(c.VolumeDir(), pv.Name)
			require.NotNil(t, pv.Spec.HostPath)
			assert.Equal(t, dir, pv.Spec.HostPath.Path)
			assert.DirExists(t, dir)
			assert.Equal(t, resource.MustParse("1Gi"), pv.Spec.Capacity[corev1.ResourceStorage])
			assert.Equal(t, []string{NodeName}, pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values)
			assert.Equal(t, provisioner.Name, pv.Annotations["pv.kubernetes.io/provisioned-by"])

			require.NoError(t, c.Clientset.CoreV1().Pods(ns).Delete(t.Context(), pod.Name, metav1.DeleteOptions{}))
			require.NoError(t, claims.Delete(t.Context(), claim.Name, metav1.DeleteOptions{}))
			deleted := time.Now()
			if tt.wantKept {
				require.Eventually(t, func() bool {
					pv, err = c.Clientset.CoreV1().PersistentVolumes().Get(t.Context(), pv.Name, metav1.GetOptions{})
					return err == nil && pv.Status.Phase == corev1.VolumeReleased
				}, liveTimeout, pollInterval, "volume %s never released", pv.Name)
				time.Sleep(time.Second) // time a provisioner would need to delete it
				assert.DirExists(t, dir, "a retained volume keeps its data")
				require.NoError(t, c.Clientset.CoreV1().PersistentVolumes().Delete(t.Context(), pv.Name, metav1.DeleteOptions{}))
				return
			}
			require.Eventually(t, func() bool {
				_, err := c.Clientset.CoreV1().PersistentVolumes().Get(t.Context(), pv.Name, metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			}, liveTimeout, pollInterval, "volume %s never deleted", pv.Name)
			t.Logf("volume deleted %s after its claim", time.Since(deleted).Round(time.Millisecond))
			assert.NoDirExists(t, dir)
		})
	}
}

// TestEphemeralStorageRequests checks that the kwok node offers
// ephemeral-storage, as a kubelet's node does, so pods that request it run.
func TestEphemeralStorageRequests(t *testing.T) {
	c := liveCluster(t)
	ns := testNamespace(t, c)
	node, err := c.Clientset.CoreV1().Nodes().Get(t.Context(), NodeName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, resource.MustParse("1Ti"), node.Status.Allocatable[corev1.ResourceEphemeralStorage])
	pod := testPod(ns, "scratch", nil)
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
	_, err = c.Clientset.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
	got := watchPod(t, c, ns, pod.Name, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	assert.Equal(t, NodeName, got.Spec.NodeName)
}
