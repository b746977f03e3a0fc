package localcluster

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// live is the package's local cluster, started by the first test that needs
// one and stopped by TestMain.
var live struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if c := live.cluster; c != nil {
		if code != 0 {
			c.KeepOnStop()
			fmt.Fprintf(os.Stderr, "localcluster: the cluster's state stays in %s (component logs in %s)\n", c.Dir, c.LogDir())
		}
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: stop: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// liveCluster returns the shared local cluster, starting it on first use;
// it skips under -short.
func liveCluster(t *testing.T) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the local cluster (run without -short)")
	}
	live.once.Do(func() {
		live.cluster, live.err = Start(context.Background(), Options{StagesDir: stagesDir})
	})
	require.NoError(t, live.err, "start the local cluster")
	return live.cluster
}

// liveTimeout bounds every wait on the live cluster: generous, the machine is shared.
const liveTimeout = 60 * time.Second

var namespaces atomic.Int32

// testNamespace creates a namespace for one test, waits for its default
// ServiceAccount (pods are refused without it) and deletes it afterwards.
func testNamespace(t *testing.T, c *Cluster) string {
	t.Helper()
	name := fmt.Sprintf("lc-%d-%d", time.Now().Unix()%100000, namespaces.Add(1))
	_, err := c.Clientset.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Clientset.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	require.Eventually(t, func() bool {
		_, err := c.Clientset.CoreV1().ServiceAccounts(name).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil
	}, liveTimeout, pollInterval, "default ServiceAccount of %s", name)
	return name
}

// watchPod polls the pod until done returns true for it, calling done with
// every version it sees, and returns the last.
func watchPod(t *testing.T, c *Cluster, namespace, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	require.Eventually(t, func() bool {
		p, err := c.Clientset.CoreV1().Pods(namespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = p
		return done(p)
	}, liveTimeout, pollInterval, "pod %s/%s", namespace, name)
	return last
}

// testPod is a pod of one container "main" with the given annotations.
func testPod(namespace, name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "ghcr.io/opsnorth/agent:test"}},
		},
	}
}

// condition returns the pod's condition of type typ, or a zero one.
func condition(p *corev1.Pod, typ corev1.PodConditionType) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.PodCondition{}
}
