package plugin

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/generated/clientset/versioned"
	schedulerv1alpha1 "opsnorth.io/scheduler/generated/clientset/versioned/typed/scheduler/v1alpha1"
)

// clients are the API clients of one command run, in the namespace of the
// kubeconfig context or -n.
type clients struct {
	sched     versioned.Interface
	kube      kubernetes.Interface
	namespace string
}

// scheduler returns the typed client of our kinds.
func (c *clients) scheduler() schedulerv1alpha1.SchedulerV1alpha1Interface {
	return c.sched.SchedulerV1alpha1()
}

// connect builds the clients from the kubectl flags, once per run.
func (o *Options) connect() (*clients, error) {
	if o.clients != nil {
		return o.clients, nil
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("namespace: %w", err)
	}
	sched, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for scheduler.opsnorth.io: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for core objects: %w", err)
	}
	o.clients = &clients{sched: sched, kube: kube, namespace: ns}
	return o.clients, nil
}

// streamPodLogs is the real LogStreamer: the kubelet's log of the container,
// through the API server.
func streamPodLogs(ctx context.Context, kube kubernetes.Interface, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return kube.CoreV1().Pods(namespace).GetLogs(pod, opts).Stream(ctx)
}
