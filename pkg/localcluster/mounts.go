package localcluster

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// mountedFiles are the files of the ConfigMap volumes the Deployment's
// container "manager" mounts, by their path in the container; configMap
// reads a ConfigMap's data by name.
func mountedFiles(d *appsv1.Deployment, configMap func(name string) (map[string]string, error)) (map[string]string, error) {
	sources := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			sources[v.Name] = v.ConfigMap.Name
		}
	}
	out := map[string]string{}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		for _, m := range c.VolumeMounts {
			name, ok := sources[m.Name]
			if !ok {
				continue
			}
			data, err := configMap(name)
			if err != nil {
				return nil, fmt.Errorf("ConfigMap %s mounted at %s: %w", name, m.MountPath, err)
			}
			for file, text := range data {
				out[path.Join(m.MountPath, file)] = text
			}
		}
	}
	return out, nil
}

// PackagedManagerFrom is PackagedManagerOf with the files of the
// ConfigMaps the Deployment mounts, read from the cluster.
func PackagedManagerFrom(ctx context.Context, cs kubernetes.Interface, d *appsv1.Deployment) (PackagedManager, error) {
	p := PackagedManagerOf(d)
	var err error
	p.Files, err = mountedFiles(d, func(name string) (map[string]string, error) {
		cm, err := cs.CoreV1().ConfigMaps(d.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return cm.Data, nil
	})
	return p, err
}

// localFiles writes files (by container path) under dir and returns env
// with each value that names one of those paths pointing at its copy, so a
// local process reads what the packaged pod would.
func localFiles(dir string, files map[string]string, env []string) ([]string, error) {
	local := map[string]string{}
	for p, text := range files {
		to := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(to, []byte(text), 0o600); err != nil {
			return nil, err
		}
		local[p] = to
	}
	out := make([]string, 0, len(env))
	for _, e := range env {
		name, value, _ := strings.Cut(e, "=")
		if to, ok := local[value]; ok {
			e = name + "=" + to
		}
		out = append(out, e)
	}
	return out, nil
}
