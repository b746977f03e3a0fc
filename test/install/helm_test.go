//go:build e2e

package install

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// The chart and how the test installs it, as users do (`helm install -n
// opsnorth-system --create-namespace`): the release and the managers in the
// managers' namespace, tasks in namespaces.tasks (left at its default).
const (
	chartDir         = "manifests/charts/opsnorth-scheduler"
	release          = "opsnorth-scheduler"
	releaseNamespace = localcluster.ManagerNamespace
	// domain is the value the chart requires, the kustomize packaging's.
	domain = "--set=managers.deployments.deploymentDomain=apps.example.com"
)

// TestHelmInstallUpgradeUninstall installs the suite with the real helm
// binary (scripts/helm.sh) as the chart's NOTES and README tell users to,
// runs the managers as the chart's ServiceAccounts with its Deployments' env,
// runs the samples to their end states, upgrades the release with a changed
// value, and uninstalls it: the CRDs, the namespaces and every user object
// (CRs and their children) must survive, the same objects (UIDs). Installing
// again adopts what was kept and the managers carry on.
//
// The chart names its objects as the kustomize packaging does (the generated
// RBAC, the admission policies and the managers' own code name them), so it
// cannot sit beside a kustomize install of the suite. This test runs first in
// the package (helm_test.go sorts before kustomize_test.go), on a cluster
// without the suite, and leaves it so: it deletes the users' objects while
// the managers run, uninstalls, then deletes what the chart keeps (the
// namespaces and CRDs) and waits until they are gone.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t)
	helm := helmBinary(t)
	crds, err := c.Dynamic.Resource(crdResource).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, crd := range crds.Items {
		require.NotContains(t, crd.GetName(), "scheduler.opsnorth.io",
			"the cluster must not hold the suite yet: this test installs it with helm, under the same names")
	}

	start := time.Now()
	helm.run(t, "install", release, chartDir, "--create-namespace", domain, "--wait", "--timeout=3m")
	t.Logf("helm install --wait: %s", time.Since(start).Round(time.Millisecond))
	installed := helm.manifest(t)
	require.NotEmpty(t, ofKind(installed, "CustomResourceDefinition"), "the chart installs the CRDs")
	requireLive(t, installed)
	waitAvailable(t, installed)
	managers := startManagers(t, localcluster.ManagerNamespace, localcluster.Components...)

	mustKubectl(t, "apply", "--server-side", "-f", sampleApp, "-f", sampleTask, "-f", sampleWorkflow)
	app, task, workflow := "hello", "hello-agent", "research-report"
	converged := time.Now()
	waitFor(t, "UserDeployment "+app+" ready", appReady(t, cs, app))
	waitFor(t, "AgentTask "+task+" Succeeded", taskSucceeded(t, cs, task))
	waitFor(t, "Workflow "+workflow+" Succeeded", workflowSucceeded(t, cs, workflow))
	t.Logf("the samples converged in %s", time.Since(converged).Round(time.Millisecond))
	requireNoRBACRefusal(t, slices.Collect(maps.Values(managers))...)
	users := usersObjects(t, cs, app, task, workflow)
	before := uids(t, users)

	t.Run("upgrade", func(t *testing.T) {
		start := time.Now()
		helm.run(t, "upgrade", release, chartDir, domain, "--wait", "--timeout=3m",
			"--set=managers.tasks.maxConcurrentReconciles=20", "--set=managers.deployments.replicas=1")
		t.Logf("helm upgrade --wait: %s", time.Since(start).Round(time.Millisecond))
		assert.Contains(t, helm.run(t, "history", release), "Upgrade complete")

		tasks, err := c.Clientset.AppsV1().Deployments(localcluster.ManagerNamespace).Get(t.Context(), "opsnorth-scheduler-tasks", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Contains(t, localcluster.PackagedManagerOf(tasks).Env, "MAX_CONCURRENT_RECONCILES=20", "the changed value reached the Deployment")
		deployments, err := c.Clientset.AppsV1().Deployments(localcluster.ManagerNamespace).Get(t.Context(), "opsnorth-scheduler-deployments", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, int32(1), *deployments.Spec.Replicas)
		_, err = c.Clientset.PolicyV1().PodDisruptionBudgets(localcluster.ManagerNamespace).Get(t.Context(), "opsnorth-scheduler-deployments", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "one replica, no PDB: %v", err)

		// The new pods of the tasks Deployment run with the new env: restart
		// the local tasks manager from it, as the rollout would.
		stopManager(t, managers["tasks"])
		managers["tasks"] = startManagers(t, localcluster.ManagerNamespace, "tasks")["tasks"]
		next := againTask(t, task, "upgraded")
		waitFor(t, "AgentTask "+next+" Succeeded after the upgrade", taskSucceeded(t, cs, next))
		requireNoRBACRefusal(t, managers["tasks"])
		assert.Equal(t, before, uids(t, users), "the upgrade left the users' objects alone")
	})

	start = time.Now()
	out := helm.run(t, "uninstall", release, "--wait", "--timeout=3m")
	t.Logf("helm uninstall (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, m := range managers {
		stopManager(t, m) // their Deployments and ServiceAccounts are gone
	}
	var removed, kept []*unstructured.Unstructured
	for _, obj := range installed {
		if obj.GetKind() == "CustomResourceDefinition" || obj.GetKind() == "Namespace" {
			kept = append(kept, obj)
		} else {
			removed = append(removed, obj)
		}
	}
	waitGone(t, removed)
	t.Logf("the release's %d other objects gone %s after the uninstall", len(removed), time.Since(start).Round(time.Millisecond))

	t.Run("the CRDs and namespaces are kept", func(t *testing.T) {
		requireLive(t, kept)
		waitEstablished(t, kept)
		assert.Contains(t, out, "These resources were kept due to the resource policy")
	})
	t.Run("every user object survived unchanged", func(t *testing.T) {
		assert.Equal(t, before, uids(t, users), "the same objects (UIDs): none deleted or recreated")
		requireLive(t, users)
		for what, cond := range map[string]func() (bool, string){
			"UserDeployment " + app + " ready":    appReady(t, cs, app),
			"AgentTask " + task + " Succeeded":    taskSucceeded(t, cs, task),
			"Workflow " + workflow + " Succeeded": workflowSucceeded(t, cs, workflow),
		} {
			ok, state := cond()
			assert.True(t, ok, "%s: %s", what, state)
		}
	})

	// Installing again adopts what uninstall kept (it still carries the
	// release's annotations) and the managers carry on with the same objects.
	start = time.Now()
	helm.run(t, "install", release, chartDir, "--create-namespace", domain, "--wait", "--timeout=3m")
	t.Logf("helm install again: %s", time.Since(start).Round(time.Millisecond))
	managers = startManagers(t, localcluster.ManagerNamespace, localcluster.Components...)
	next := againTask(t, task, "reinstalled")
	waitFor(t, "AgentTask "+next+" Succeeded after installing again", taskSucceeded(t, cs, next))
	waitFor(t, "UserDeployment "+app+" ready after installing again", appReady(t, cs, app))
	assert.Equal(t, before, uids(t, users), "installing again kept the users' objects")
	requireNoRBACRefusal(t, slices.Collect(maps.Values(managers))...)

	cleanUp(t, helm, users)
}

// againTask creates a copy of the sample task named <task>-<suffix> and
// returns its name.
func againTask(t *testing.T, task, suffix string) string {
	t.Helper()
	sample := &v1alpha1.AgentTask{}
	readSample(t, sampleTask, sample)
	next := &v1alpha1.AgentTask{ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: task + "-" + suffix}, Spec: sample.Spec}
	next.Spec.TaskID += "-" + suffix
	_, err := scheduler(t).SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), next, metav1.CreateOptions{})
	require.NoError(t, err)
	return next.Name
}

// cleanUp leaves the cluster without the suite, for the package's next test:
// the users' objects deleted while the managers run (the UserDeployment's
// finalizer removes its user namespace), the release uninstalled, then the
// kept namespaces and CRDs deleted, each waited for.
func cleanUp(t *testing.T, helm *helmCLI, users []*unstructured.Unstructured) {
	t.Helper()
	start := time.Now()
	mustKubectl(t, "delete", "--wait=false", "-f", sampleApp, "-f", sampleTask, "-f", sampleWorkflow)
	mustKubectl(t, "delete", "--wait=false", "-n", taskNamespace, "agenttasks", "--all")
	waitGone(t, users)
	installed := helm.manifest(t)
	helm.run(t, "uninstall", release, "--wait", "--timeout=3m")
	var kept []string
	for _, obj := range installed {
		if obj.GetKind() == "CustomResourceDefinition" || obj.GetKind() == "Namespace" {
			kept = append(kept, strings.ToLower(obj.GetKind())+"/"+obj.GetName())
		}
	}
	mustKubectl(t, append([]string{"delete", "--wait=false"}, kept...)...)
	waitGone(t, installed)
	t.Logf("cleaned up (users' objects, the release, its kept namespaces and CRDs) in %s", time.Since(start).Round(time.Millisecond))
}

// helmCLI runs the real helm binary against the local cluster as its admin,
// with its own config, cache and data directories.
type helmCLI struct {
	bin string
	env []string
}

// helmBinary builds (once per machine, cached outside the repository) or
// finds the helm binary scripts/helm.sh provides.
func helmBinary(t *testing.T) *helmCLI {
	t.Helper()
	c := requireCluster(t)
	start := time.Now()
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "scripts", "helm.sh"), "build")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "scripts/helm.sh build: %s", stderr.String())
	if d := time.Since(start); d > time.Second {
		t.Logf("scripts/helm.sh build: %s", d.Round(time.Millisecond))
	}
	home := t.TempDir()
	return &helmCLI{
		bin: strings.TrimSpace(string(out)),
		env: append(os.Environ(),
			"KUBECONFIG="+c.AdminKubeconfig,
			"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
			"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
			"HELM_DATA_HOME="+filepath.Join(home, "data"),
			"HELM_NAMESPACE="+releaseNamespace,
		),
	}
}

// run runs helm with args in the repository root, failing the test on a
// non-zero exit, and returns its combined output.
func (h *helmCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), h.bin, args...)
	cmd.Dir, cmd.Env = root, h.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "helm %s:\n%s", strings.Join(args, " "), out.String())
	return out.String()
}

// manifest is the release's objects, as `helm get manifest` prints them.
func (h *helmCLI) manifest(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), h.bin, "get", "manifest", release)
	cmd.Dir, cmd.Env = root, h.env
	out, err := cmd.Output()
	require.NoError(t, err, "helm get manifest %s", release)
	var objs []*unstructured.Unstructured
	for doc := range strings.SplitSeq(string(out), "\n---\n") {
		data, err := yaml.YAMLToJSON([]byte(doc))
		require.NoError(t, err, "helm get manifest %s", release)
		obj := &unstructured.Unstructured{}
		if string(data) == "null" || obj.UnmarshalJSON(data) != nil {
			continue // a document of comments only
		}
		objs = append(objs, obj)
	}
	require.NotEmpty(t, objs, "helm get manifest %s printed no object", release)
	return objs
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
