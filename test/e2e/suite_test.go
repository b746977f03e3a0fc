//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// taskNamespace is where the tasks and workflows managers of the suite work.
const taskNamespace = "agent-tasks"

// managers are the suite's manager processes, started by TestMain.
var managers []*localcluster.Manager

// startSuite installs the packaged RBAC and starts the three managers, each
// authenticated as its own ServiceAccount, as `make run` does.
func startSuite(ctx context.Context, c *localcluster.Cluster, root string) error {
	if _, err := c.InstallRBAC(ctx, root); err != nil {
		return err
	}
	bins, err := localcluster.BuildManagers(ctx, root, filepath.Join(c.Dir, "bin"))
	if err != nil {
		return err
	}
	for _, comp := range localcluster.Components {
		m, err := c.StartManager(ctx, comp, comp, bins[comp])
		if err != nil {
			return err
		}
		managers = append(managers, m)
	}
	return nil
}

// rbacErrors reports every manager whose log shows the API server refusing
// it: the packaged RBAC must grant each manager all it needs.
func rbacErrors(ms []*localcluster.Manager) error {
	var errs []error
	for _, m := range ms {
		data, err := os.ReadFile(m.Process.LogPath)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			// The authorizer's refusal names the user; other "forbidden"
			// answers (a namespace being deleted, an admission policy the
			// manager reports in an event) are not about RBAC.
			if strings.Contains(line, `is forbidden: User \"system:serviceaccount:`) ||
				strings.Contains(line, `is forbidden: User "system:serviceaccount:`) {
				errs = append(errs, fmt.Errorf("%s manager was refused by RBAC: %s", m.Component, line))
				break
			}
		}
	}
	if len(errs) == 0 {
		fmt.Printf("e2e: no RBAC refusal in the logs of %d managers\n", len(ms))
	}
	return errors.Join(errs...)
}

// scheduler is an admin client of the scheduler API.
func scheduler(t *testing.T, c *localcluster.Cluster) versioned.Interface {
	t.Helper()
	cs, err := versioned.NewForConfig(c.Config)
	require.NoError(t, err)
	return cs
}

// kubectl runs the cluster's kubectl as the admin and returns its output.
func kubectl(t *testing.T, c *localcluster.Cluster, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), c.Binary("kubectl"), append([]string{"--kubeconfig=" + c.AdminKubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// kubectlWait runs `kubectl wait --for=condition=<cond>` on obj, as users do.
func kubectlWait(t *testing.T, c *localcluster.Cluster, namespace, obj, cond string) {
	t.Helper()
	out, err := kubectl(t, c, "wait", "-n", namespace, "--for=condition="+cond, obj, "--timeout=90s")
	require.NoError(t, err, "kubectl wait --for=condition=%s %s: %s", cond, obj, out)
}
