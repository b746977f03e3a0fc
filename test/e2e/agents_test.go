//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestAgentDeletionRemovesItsChildren runs an Agent to Ready and deletes
// it: the real garbage collector removes its Deployment, Service,
// capabilities ConfigMap and NetworkPolicy (owner references, no
// finalizer), and, as it was the namespace's last Agent, the tier quota and
// limit range it owned; nothing the suite labelled for it is left.
func TestAgentDeletionRemovesItsChildren(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	ns := newNamespace(t, c)
	a := testkit.MakeAgent("echo", ns).Runtime(ossav1.RuntimeK8s).Obj()
	_, err := cs.OssaV1().Agents(ns).Create(t.Context(), a, metav1.CreateOptions{})
	require.NoError(t, err)
	kubectlWait(t, c, ns, "agent/echo", "Ready")
	selector := labelkeys.Agent + "=echo"
	out, err := kubectl(t, c, "get", "deployments,services,configmaps,networkpolicies", "-n", ns, "-l", selector, "-o", "name")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"deployment.apps/echo", "service/echo", "configmap/echo-capabilities",
		"networkpolicy.networking.k8s.io/echo"}, strings.Fields(out))
	tierObjects := []string{"get", "resourcequotas,limitranges", "-n", ns, "--field-selector=metadata.name=opsnorth-tier", "-o", "name"}
	out, err = kubectl(t, c, tierObjects...)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"resourcequota/opsnorth-tier", "limitrange/opsnorth-tier"}, strings.Fields(out))

	require.NoError(t, cs.OssaV1().Agents(ns).Delete(t.Context(), "echo", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := cs.OssaV1().Agents(ns).Get(t.Context(), "echo", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "Agent echo stuck in deletion")
	require.Eventually(t, func() bool {
		out, err := kubectl(t, c, "get", "all,configmaps,horizontalpodautoscalers,networkpolicies", "-n", ns, "-l", selector, "-o", "name")
		return err == nil && out == ""
	}, timeout, tick, "children of the deleted Agent remain in %s", ns)
	require.Eventually(t, func() bool {
		out, err := kubectl(t, c, tierObjects...)
		return err == nil && out == ""
	}, timeout, tick, "the tier quota and limit range of the last Agent remain in %s", ns)
}
