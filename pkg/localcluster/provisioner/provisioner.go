// Package provisioner dynamically provisions host-path PersistentVolumes for
// the local cluster, with sig-storage-lib-external-provisioner (the library
// real external provisioners are built on): each claim of a StorageClass
// naming Name gets a directory of its own under a root directory, created on
// provision and removed when its volume is deleted with reclaim policy Delete.
package provisioner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// Name is the provisioner StorageClasses name to be served by this one.
const Name = "localcluster.opsnorth.io/host-path"

// DefaultClassName is the name of the cluster's default StorageClass.
const DefaultClassName = "local-path"

// DefaultClass is the StorageClass claims without storageClassName get: this
// provisioner, reclaim policy Delete, and WaitForFirstConsumer binding, so a
// volume is made only once the scheduler has placed a pod that uses the
// claim, and the scheduler's volume binding runs as on real clusters with
// node-local storage (kind, k3s); an unused claim stays Pending.
func DefaultClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        DefaultClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       Name,
		ReclaimPolicy:     new(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: new(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

// HostPath makes each volume a directory under Root.
type HostPath struct {
	Root string
}

var _ controller.Provisioner = (*HostPath)(nil)

// Provision creates <Root>/<PV name> and returns a hostPath volume of it with
// the claim's size and access modes, pinned to the node the scheduler chose.
func (h *HostPath) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	if opts.PVC.Spec.Selector != nil {
		return nil, controller.ProvisioningFinished, errors.New("claims with a selector are not supported")
	}
	path := filepath.Join(h.Root, opts.PVName)
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, controller.ProvisioningFinished, fmt.Errorf("create volume directory: %w", err)
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if opts.StorageClass.ReclaimPolicy != nil {
		reclaim = *opts.StorageClass.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   opts.PVC.Spec.AccessModes,
			VolumeMode:                    opts.PVC.Spec.VolumeMode,
			MountOptions:                  opts.StorageClass.MountOptions,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage]},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path, Type: new(corev1.HostPathDirectoryOrCreate)},
			},
		},
	}
	if node := opts.SelectedNodeName; node != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}}}},
		}}
	}
	return pv, controller.ProvisioningFinished, nil
}

// Delete removes the volume's directory. A volume whose path is not a
// directory directly under Root is none of this provisioner's and is left alone.
func (h *HostPath) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	if pv.Spec.HostPath == nil {
		return &controller.IgnoredError{Reason: "not a hostPath volume"}
	}
	path := filepath.Clean(pv.Spec.HostPath.Path)
	if filepath.Dir(path) != filepath.Clean(h.Root) || strings.HasPrefix(filepath.Base(path), ".") {
		return &controller.IgnoredError{Reason: fmt.Sprintf("%s is not a volume directory under %s", path, h.Root)}
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove volume directory: %w", err)
	}
	return nil
}

// Run serves claims of StorageClasses naming Name until ctx ends, logging to
// the logger in ctx. It returns once its workers have stopped.
func Run(ctx context.Context, client kubernetes.Interface, root string) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("create volume root: %w", err)
	}
	pc := controller.NewProvisionController(ctx, client, Name, &HostPath{Root: root}, controller.LeaderElection(false))
	var workers sync.WaitGroup
	pc.ControllerWaitGroup(&workers)
	pc.Run(ctx)
	workers.Wait()
	return nil
}
