package localcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeName is the name of the kwok node every pod of a local cluster runs on.
const NodeName = "kwok-node-0"

// kwokNode is a fake node as kwokctl creates them: kwok (which manages all
// nodes here) makes it Ready, and keeps it so through its Lease. No taints,
// so every pod can be scheduled on it.
func kwokNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":           "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/os":              "linux",
				"kubernetes.io/hostname":        name,
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
			},
		},
	}
}

// nodeUsable reports whether pods can run on the node: Ready, schedulable,
// and without taints (the node lifecycle controller taints a new node
// not-ready until it sees it Ready, a moment after kwok made it so).
func nodeUsable(n *corev1.Node) bool {
	if n.Spec.Unschedulable || len(n.Spec.Taints) > 0 {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// createNode creates the kwok node if it does not exist and waits until pods can run on it.
func (c *Cluster) createNode(ctx context.Context, name string) error {
	nodes := c.Clientset.CoreV1().Nodes()
	if _, err := nodes.Create(ctx, kwokNode(name), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return poll(ctx, "node "+name+" Ready and untainted", func(ctx context.Context) (bool, error) {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get node %s: %w", name, err)
		}
		return nodeUsable(n), nil
	})
}
