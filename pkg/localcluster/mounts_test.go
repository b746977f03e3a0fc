package localcluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestMountedFiles: a local manager process reads the ConfigMap files its
// packaged pod mounts, through the env that names them.
func TestMountedFiles(t *testing.T) {
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{
		{Name: "defaults", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "pod-defaults"}}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "manager", VolumeMounts: []corev1.VolumeMount{
		{Name: "defaults", MountPath: "/etc/opsnorth/pod-defaults"}, {Name: "tmp", MountPath: "/tmp"}}}}
	files, err := mountedFiles(d, func(name string) (map[string]string, error) {
		if name != "pod-defaults" {
			return nil, errors.New("no such ConfigMap")
		}
		return map[string]string{"pod-defaults.yaml": "enforce: true\n"}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"/etc/opsnorth/pod-defaults/pod-defaults.yaml": "enforce: true\n"}, files)

	dir := t.TempDir()
	env, err := localFiles(dir, files, []string{"POD_DEFAULTS=/etc/opsnorth/pod-defaults/pod-defaults.yaml", "GOGC=50"})
	require.NoError(t, err)
	local := filepath.Join(dir, "etc", "opsnorth", "pod-defaults", "pod-defaults.yaml")
	assert.Equal(t, []string{"POD_DEFAULTS=" + local, "GOGC=50"}, env)
	data, err := os.ReadFile(local)
	require.NoError(t, err)
	assert.Equal(t, "enforce: true\n", string(data))

	_, err = mountedFiles(d, func(string) (map[string]string, error) { return nil, errors.New("gone") })
	assert.ErrorContains(t, err, "ConfigMap pod-defaults mounted at /etc/opsnorth/pod-defaults: gone")
}
