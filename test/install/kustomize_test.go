//go:build e2e

package install

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// The kustomize units, as their comments tell users to apply them: the
// cluster unit once, first; then each manager's overlay.
const clusterUnit = "kustomize/overlays/cluster"

func overlay(component string) string { return "kustomize/overlays/" + component }

// TestKustomizeDeleteOneManager installs the suite as the kustomizations
// say (the cluster unit, then the three managers' overlays, server-side),
// runs users' objects to their end states, then uninstalls one manager
// exactly as an operator would, `kubectl delete -k kustomize/overlays/tasks`:
// only that manager's objects may go. Every CRD, every user object (two
// apps, one with ConfigMaps of env and files; a task; a workflow and its
// step tasks), each user namespace and the Deployments, Services and
// ConfigMaps in it must survive unchanged (same UID, not being deleted), and
// so must every object of the other units. Re-applying the overlay brings
// the manager back, and it runs tasks again.
func TestKustomizeDeleteOneManager(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t)

	applyKustomize(t, clusterUnit)
	waitEstablished(t, render(t, clusterUnit))
	for _, comp := range localcluster.Components {
		applyKustomize(t, overlay(comp))
	}
	available := time.Now()
	for _, comp := range localcluster.Components {
		waitAvailable(t, render(t, overlay(comp)))
	}
	t.Logf("the managers' packaged Deployments Available on the kwok node in %s", time.Since(available).Round(time.Millisecond))
	managers := startManagers(t, localcluster.ManagerNamespace, localcluster.Components...)

	mustKubectl(t, "apply", "--server-side", "-f", sampleTemplate)
	mustKubectl(t, "apply", "--server-side", "-f", sampleApp, "-f", sampleConfiguredApp, "-f", sampleTask, "-f", sampleWorkflow)
	app, configured, task, workflow := "hello", "shop", "hello-agent", "research-report"
	converged := time.Now()
	waitFor(t, "UserDeployment "+app+" ready", appReady(t, cs, app))
	waitFor(t, "UserDeployment "+configured+" ready", appReady(t, cs, configured))
	waitFor(t, "AgentTask "+task+" Succeeded", taskSucceeded(t, cs, task))
	waitFor(t, "Workflow "+workflow+" Succeeded", workflowSucceeded(t, cs, workflow))
	t.Logf("the samples converged in %s", time.Since(converged).Round(time.Millisecond))
	requireNoRBACRefusal(t, slices.Collect(maps.Values(managers))...)

	users := append(usersObjects(t, cs, app, task, workflow), appObjects(t, cs, configured)...)
	require.NotZero(t, managedConfigMaps(t, users), "the apps' own ConfigMaps")
	before := uids(t, users)
	tasksPods := func() (int, error) {
		pods, err := c.Clientset.CoreV1().Pods(localcluster.ManagerNamespace).List(t.Context(),
			metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=tasks"})
		if err != nil {
			return 0, err
		}
		return len(pods.Items), nil
	}
	n, err := tasksPods()
	require.NoError(t, err)
	require.Equal(t, 2, n, "the tasks manager's packaged pods on the kwok node")

	start := time.Now()
	out := mustKubectl(t, "delete", "-k", "kustomize/overlays/tasks")
	t.Logf("kubectl delete -k kustomize/overlays/tasks (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	// The Deployment's pods go, and with the ServiceAccount their token.
	stopManager(t, managers["tasks"])

	gone := render(t, overlay("tasks"))
	waitGone(t, gone)
	t.Logf("the tasks overlay's %d objects gone %s after the delete", len(gone), time.Since(start).Round(time.Millisecond))
	waitFor(t, "the tasks manager's pods gone", func() (bool, string) {
		n, err := tasksPods()
		return err == nil && n == 0, fmt.Sprintf("%d pods, %v", n, err)
	})
	t.Logf("the tasks manager's pods gone %s after the delete", time.Since(start).Round(time.Millisecond))

	t.Run("the other units are intact", func(t *testing.T) {
		kept := render(t, clusterUnit)
		require.NotEmpty(t, ofKind(kept, "CustomResourceDefinition"))
		for _, comp := range []string{"deployments", "workflows"} {
			kept = append(kept, render(t, overlay(comp))...)
		}
		requireLive(t, kept)
		waitEstablished(t, kept)
		waitAvailable(t, kept)
	})
	t.Run("every user object survived unchanged", func(t *testing.T) {
		assert.Equal(t, before, uids(t, users), "the same objects (UIDs): none deleted or recreated")
		requireLive(t, users)
		for what, cond := range map[string]func() (bool, string){
			"UserDeployment " + app + " ready":        appReady(t, cs, app),
			"UserDeployment " + configured + " ready": appReady(t, cs, configured),
			"AgentTask " + task + " Succeeded":        taskSucceeded(t, cs, task),
			"Workflow " + workflow + " Succeeded":     workflowSucceeded(t, cs, workflow),
		} {
			ok, state := cond()
			assert.True(t, ok, "%s: %s", what, state)
		}
	})

	// Installing the manager again is applying its overlay again. Its new
	// leader waits out the old one's Lease (it survives the overlay, which
	// does not list it, and the old leader could not release it: its RBAC
	// went first), as it would on a real cluster.
	reinstall := time.Now()
	applyKustomize(t, overlay("tasks"))
	waitAvailable(t, render(t, overlay("tasks")))
	again := startManagers(t, localcluster.ManagerNamespace, "tasks")["tasks"]
	sample := &v1alpha1.AgentTask{}
	readSample(t, sampleTask, sample)
	next := &v1alpha1.AgentTask{ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: task + "-again"}, Spec: sample.Spec}
	next.Spec.TaskID += "-again"
	_, err = cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), next, metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, "AgentTask "+next.Name+" Succeeded after the tasks overlay was applied again", taskSucceeded(t, cs, next.Name))
	t.Logf("tasks manager reinstalled and AgentTask %s Succeeded in %s", next.Name, time.Since(reinstall).Round(time.Millisecond))
	requireNoRBACRefusal(t, again)
	assert.Equal(t, before, uids(t, users), "the users' objects are still the same")
}
