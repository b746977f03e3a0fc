package integration

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdwait "k8s.io/kubectl/pkg/cmd/wait"

	"opsnorth.io/scheduler/pkg/testenv"
)

// kubectlWait runs kubectl's own wait command (k8s.io/kubectl, the version
// of our k8s.io pins) in-process, so no kubectl binary is needed.
type kubectlWait struct{ kubeconfig, cacheDir string }

func newKubectlWait(t *testing.T, env *testenv.Env) *kubectlWait {
	t.Helper()
	kubeconfig, err := env.KubeconfigFor(t.TempDir(), "kstatus-viewer", "system:masters")
	require.NoError(t, err)
	return &kubectlWait{kubeconfig: kubeconfig, cacheDir: t.TempDir()}
}

// met runs `kubectl wait <resource>.<group>/<name> -n <namespace>
// --for=<forArg> --timeout=0` (check once, do not wait) and reports whether
// the condition was met; any other error fails the test.
func (k *kubectlWait) met(t *testing.T, ref objRef, forArg string) bool {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.CacheDir, flags.Namespace = &k.kubeconfig, &k.cacheDir, &ref.namespace
	var out, errOut bytes.Buffer
	w := cmdwait.NewWaitFlags(flags, genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	w.ForCondition, w.Timeout = []string{forArg}, 0
	gvr := schedulerResources[ref.kind].gvr
	o, err := w.ToOptions([]string{gvr.Resource + "." + gvr.Group + "/" + ref.name})
	require.NoError(t, err)
	if err := o.RunWaitContext(t.Context()); err != nil {
		require.ErrorContains(t, err, "condition not met", "kubectl wait --for=%s: %s", forArg, errOut.String())
		return false
	}
	require.Contains(t, out.String(), "condition met")
	return true
}
