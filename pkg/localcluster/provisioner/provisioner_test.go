package provisioner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

func claim(mods ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}},
		},
	}
	for _, m := range mods {
		m(c)
	}
	return c
}

func TestProvision(t *testing.T) {
	retain := DefaultClass()
	retain.ReclaimPolicy = new(corev1.PersistentVolumeReclaimRetain)
	tests := []struct {
		name        string
		opts        controller.ProvisionOptions
		wantReclaim corev1.PersistentVolumeReclaimPolicy
		wantNode    string
		wantErr     string
	}{
		{"late binding pins the volume to the chosen node", controller.ProvisionOptions{StorageClass: DefaultClass(), PVName: "pvc-1", PVC: claim(), SelectedNodeName: "kwok-node-0"},
			corev1.PersistentVolumeReclaimDelete, "kwok-node-0", ""},
		{"no chosen node: no affinity", controller.ProvisionOptions{StorageClass: DefaultClass(), PVName: "pvc-2", PVC: claim()},
			corev1.PersistentVolumeReclaimDelete, "", ""},
		{"the class's reclaim policy", controller.ProvisionOptions{StorageClass: retain, PVName: "pvc-3", PVC: claim()},
			corev1.PersistentVolumeReclaimRetain, "", ""},
		{"a selector cannot be met", controller.ProvisionOptions{StorageClass: DefaultClass(), PVName: "pvc-4", PVC: claim(func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd"}}
		})}, "", "", "claims with a selector are not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &HostPath{Root: t.TempDir()}
			pv, state, err := h.Provision(t.Context(), tt.opts)
			assert.Equal(t, controller.ProvisioningFinished, state)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NoDirExists(t, filepath.Join(h.Root, tt.opts.PVName))
				return
			}
			require.NoError(t, err)
			dir := filepath.Join(h.Root, tt.opts.PVName)
			assert.DirExists(t, dir)
			assert.Equal(t, tt.opts.PVName, pv.Name)
			assert.Equal(t, dir, pv.Spec.HostPath.Path)
			assert.Equal(t, tt.wantReclaim, pv.Spec.PersistentVolumeReclaimPolicy)
			assert.Equal(t, resource.MustParse("3Gi"), pv.Spec.Capacity[corev1.ResourceStorage])
			assert.Equal(t, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, pv.Spec.AccessModes)
			if tt.wantNode == "" {
				assert.Nil(t, pv.Spec.NodeAffinity)
			} else {
				assert.Equal(t, []string{tt.wantNode}, pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	hostPath := func(path string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: path},
		}}}
	}
	tests := []struct {
		name     string
		pv       *corev1.PersistentVolume
		dir      string // created before Delete
		wantGone bool
		ignored  bool
	}{
		{"a volume directory is removed", hostPath(filepath.Join(root, "pvc-1")), filepath.Join(root, "pvc-1"), true, false},
		{"already gone is fine", hostPath(filepath.Join(root, "pvc-2")), "", true, false},
		{"a path outside the root is left alone", hostPath(filepath.Join(outside, "pvc-3")), filepath.Join(outside, "pvc-3"), false, true},
		{"the root itself is left alone", hostPath(root + "/pvc-4/.."), "", false, true},
		{"not a host path", &corev1.PersistentVolume{}, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.dir != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(tt.dir, "sub"), 0o700))
			}
			err := (&HostPath{Root: root}).Delete(t.Context(), tt.pv)
			if tt.ignored {
				var ignored *controller.IgnoredError
				require.ErrorAs(t, err, &ignored)
			} else {
				require.NoError(t, err)
			}
			if tt.dir != "" && !tt.wantGone {
				assert.DirExists(t, tt.dir)
			}
			if tt.dir != "" && tt.wantGone {
				assert.NoDirExists(t, tt.dir)
			}
			assert.DirExists(t, root)
		})
	}
}
