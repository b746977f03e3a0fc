//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/testkit"
)

// Keys the kwok stages read (scripts/kwok-stages/README.md).
const (
	delayKey   = "kwok.opsnorth.io/delay"
	exitKey    = "kwok.opsnorth.io/exit-code"
	messageKey = "kwok.opsnorth.io/termination-message"
)

// timeout bounds every wait: generous, the machine is shared.
const timeout = 90 * time.Second

const tick = 100 * time.Millisecond

var nsCounter atomic.Int32

// newNamespace creates a backend namespace for one test, waits for its default
// ServiceAccount (pods are refused without it), and deletes it afterwards.
func newNamespace(t *testing.T, c *localcluster.Cluster) string {
	t.Helper()
	ctx := t.Context()
	name := fmt.Sprintf("e2e-%d-%d", time.Now().Unix()%100000, nsCounter.Add(1))
	_, err := c.Clientset.CoreV1().Namespaces().Create(ctx, testkit.MakeBackendNamespace(name, ""), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Clientset.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	require.Eventually(t, func() bool {
		_, err := c.Clientset.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	}, timeout, tick, "default ServiceAccount of %s", name)
	return name
}

// job is a one-pod Job that never retries; mods adjust it.
func job(namespace, name string, mods ...func(*batchv1.Job)) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "registry.invalid/agent:e2e"}},
				},
			},
		},
	}
	for _, m := range mods {
		m(j)
	}
	return j
}

func withAnnotation(key, value string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		if j.Spec.Template.Annotations == nil {
			j.Spec.Template.Annotations = map[string]string{}
		}
		j.Spec.Template.Annotations[key] = value
	}
}

func withLabel(key, value string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		if j.Spec.Template.Labels == nil {
			j.Spec.Template.Labels = map[string]string{}
		}
		j.Spec.Template.Labels[key] = value
	}
}

// jobCondition returns the Job's condition of type typ, or nil.
func jobCondition(j *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ && j.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// waitJob waits until the Job has condition typ (Complete or Failed) true,
// failing at once if it reaches the other terminal condition.
func waitJob(t *testing.T, cs kubernetes.Interface, namespace, name string, typ batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	other := batchv1.JobFailed
	if typ == batchv1.JobFailed {
		other = batchv1.JobComplete
	}
	var got *batchv1.Job
	require.Eventually(t, func() bool {
		j, err := cs.BatchV1().Jobs(namespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		got = j
		return jobCondition(j, typ) != nil || jobCondition(j, other) != nil
	}, timeout, tick, "job %s/%s never finished", namespace, name)
	require.Nil(t, jobCondition(got, other), "job %s/%s: want %s, got %s: %+v", namespace, name, typ, other, got.Status.Conditions)
	return got
}

// jobPod returns the single pod of a Job.
func jobPod(t *testing.T, cs kubernetes.Interface, j *batchv1.Job) *corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods(j.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + j.Name})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1, "pods of job %s", j.Name)
	return &pods.Items[0]
}

// terminated returns the terminated state of the pod's only container.
func terminated(t *testing.T, pod *corev1.Pod) *corev1.ContainerStateTerminated {
	t.Helper()
	require.Len(t, pod.Status.ContainerStatuses, 1, "container statuses of %s", pod.Name)
	st := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, st, "container of %s not terminated: %+v", pod.Name, pod.Status.ContainerStatuses[0].State)
	return st
}
