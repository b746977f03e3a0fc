//go:build e2e

package install

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// scheduler is an admin client of the scheduler API.
func scheduler(t *testing.T) versioned.Interface {
	t.Helper()
	cs, err := versioned.NewForConfig(requireCluster(t).Config)
	require.NoError(t, err)
	return cs
}

// usersObjects returns what users own after the samples converged: the app
// and what appObjects lists with it, the task, the workflow and its step
// tasks.
func usersObjects(t *testing.T, cs versioned.Interface, app, task, workflow string) []*unstructured.Unstructured {
	t.Helper()
	objs := []*unstructured.Unstructured{
		ref(schedulerGroup, "AgentTask", taskNamespace, task),
		ref(schedulerGroup, "Workflow", taskNamespace, workflow),
	}
	wf, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), workflow, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, wf.Status.StepStatuses)
	for _, s := range wf.Status.StepStatuses {
		require.NotEmpty(t, s.TaskName, "step %s", s.Name)
		objs = append(objs, ref(schedulerGroup, "AgentTask", taskNamespace, s.TaskName))
	}
	return append(objs, appObjects(t, cs, app)...)
}

// appObjects returns a converged UserDeployment, its user namespace and
// every Deployment, Service and ConfigMap in that namespace (the app's
// children; kube-root-ca.crt too). It logs how many ConfigMaps the manager
// created (label app.kubernetes.io/managed-by).
func appObjects(t *testing.T, cs versioned.Interface, app string) []*unstructured.Unstructured {
	t.Helper()
	objs := []*unstructured.Unstructured{ref(schedulerGroup, "UserDeployment", appNamespace, app)}
	ud, err := cs.SchedulerV1alpha1().UserDeployments(appNamespace).Get(t.Context(), app, metav1.GetOptions{})
	require.NoError(t, err)
	ns := ud.Status.Namespace
	require.NotEmpty(t, ns, "the app's user namespace")
	objs = append(objs, ref("v1", "Namespace", "", ns))
	kube := requireCluster(t).Clientset
	deployments, err := kube.AppsV1().Deployments(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, deployments.Items, "the app's Deployments in %s", ns)
	for _, d := range deployments.Items {
		objs = append(objs, ref("apps/v1", "Deployment", ns, d.Name))
	}
	services, err := kube.CoreV1().Services(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, services.Items, "the app's Services in %s", ns)
	for _, s := range services.Items {
		objs = append(objs, ref("v1", "Service", ns, s.Name))
	}
	configMaps, err := kube.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	managed := 0
	for _, cm := range configMaps.Items {
		objs = append(objs, ref("v1", "ConfigMap", ns, cm.Name))
		if cm.Labels[labelkeys.ManagedBy] == labelkeys.ManagedByValue {
			managed++
		}
	}
	t.Logf("UserDeployment %s: user namespace %s with %d Deployments, %d Services, %d ConfigMaps (%d the app's)",
		app, ns, len(deployments.Items), len(services.Items), len(configMaps.Items), managed)
	return objs
}

// managedConfigMaps counts the ConfigMaps among objs that the deployments
// manager created.
func managedConfigMaps(t *testing.T, objs []*unstructured.Unstructured) int {
	t.Helper()
	g := newGetter(t)
	n := 0
	for _, obj := range ofKind(objs, "ConfigMap") {
		live, err := g.get(t.Context(), obj)
		require.NoError(t, err, "%s", describe(obj))
		if live.GetLabels()[labelkeys.ManagedBy] == labelkeys.ManagedByValue {
			n++
		}
	}
	return n
}

// ref is an object by its identity only, for getter.
func ref(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// uids reads each object's UID, by describe.
func uids(t *testing.T, objs []*unstructured.Unstructured) map[string]types.UID {
	t.Helper()
	g := newGetter(t)
	out := make(map[string]types.UID, len(objs))
	for _, obj := range objs {
		live, err := g.get(t.Context(), obj)
		require.NoError(t, err, "%s", describe(obj))
		out[describe(obj)] = live.GetUID()
	}
	return out
}

func appReady(t *testing.T, cs versioned.Interface, name string) func() (bool, string) {
	return func() (bool, string) {
		ud, err := cs.SchedulerV1alpha1().UserDeployments(appNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		state := "phase " + string(ud.Status.Phase)
		if c := meta.FindStatusCondition(ud.Status.Conditions, v1alpha1.ConditionReady); c != nil {
			state += ", " + c.Reason + ": " + c.Message
		}
		return ud.Status.Phase == v1alpha1.PhaseReady && meta.IsStatusConditionTrue(ud.Status.Conditions, v1alpha1.ConditionReady), state
	}
}

func taskSucceeded(t *testing.T, cs versioned.Interface, name string) func() (bool, string) {
	return func() (bool, string) {
		at, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return at.Status.Phase == v1alpha1.TaskSucceeded,
			fmt.Sprintf("phase %s, reason %s: %s", at.Status.Phase, at.Status.Reason, at.Status.Message)
	}
}

func workflowSucceeded(t *testing.T, cs versioned.Interface, name string) func() (bool, string) {
	return func() (bool, string) {
		wf, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return wf.Status.Phase == v1alpha1.WorkflowSucceeded, fmt.Sprintf("phase %s: %s", wf.Status.Phase, wf.Status.Message)
	}
}
