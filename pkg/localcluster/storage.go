package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"opsnorth.io/scheduler/pkg/localcluster/provisioner"
)

// VolumeDir holds one directory per provisioned PersistentVolume, named after it.
func (c *Cluster) VolumeDir() string { return c.layout.path("volumes") }

// startProvisioner installs the default StorageClass (provisioner.DefaultClass)
// and runs its provisioner in this process, logging to <Dir>/logs/provisioner.log,
// until Stop. A goroutine rather than a process: nothing to build, and it
// ends with whatever runs the cluster.
func (c *Cluster) startProvisioner(ctx context.Context) error {
	classes := c.Clientset.StorageV1().StorageClasses()
	if _, err := classes.Create(ctx, provisioner.DefaultClass(), metav1.CreateOptions{FieldManager: FieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create StorageClass %s: %w", provisioner.DefaultClassName, err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.UserAgent = "localcluster-provisioner"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("provisioner client: %w", err)
	}
	logPath := c.layout.path("logs", "provisioner.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log of the provisioner: %w", err)
	}
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(2)))
	runCtx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	done := make(chan error, 1)
	go func() {
		err := provisioner.Run(runCtx, client, c.VolumeDir())
		done <- errors.Join(err, logFile.Close())
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stops = append(c.stops, func(timeout time.Duration) error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(timeout):
			return fmt.Errorf("provisioner still running %s after stop; log %s", timeout, logPath)
		}
	})
	return nil
}
