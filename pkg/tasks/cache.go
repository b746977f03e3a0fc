package tasks

import (
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/generated/informers/externalversions/internalinterfaces"
	informers "opsnorth.io/scheduler/generated/informers/externalversions/scheduler/v1alpha1"
)

// unfinishedPods selects the pods that have not finished: a pending pod
// says why its agent does not start (podCause), a running one that it runs.
// A task needs a finished pod once, when its Job concludes, and reads it
// from the API server then, so the cache holds the pods in flight, not
// every pod kept until its Job's TTL: a pod leaves the cache with a delete
// when it finishes. Pods are trimmed to a few status fields (trimPod).
var unfinishedPods = fields.AndSelectors(
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
)

// notSettled selects the tasks the manager still has work on (status.settled
// is a selectable field of the CRD; unset reads as ""). A task that settles
// leaves the informer's cache with a delete, so the cache holds the tasks in
// flight, not every task kept until its owner deletes it.
var notSettled = fields.OneTermNotEqualSelector("status.settled", "true").String()

// unsettledTasks builds the AgentTask informer of namespace ("" for all) on
// the tasks that are not settled. It has no namespace index: the controller
// reads tasks by key only.
func unsettledTasks(namespace string) internalinterfaces.NewInformerFunc {
	return func(cs versioned.Interface, resync time.Duration) toolscache.SharedIndexInformer {
		return informers.NewFilteredAgentTaskInformer(cs, namespace, resync, toolscache.Indexers{},
			func(o *metav1.ListOptions) { o.FieldSelector = notSettled })
	}
}

// podJobIndex indexes cached pods by the namespace/name of the Job that
// controls them.
const podJobIndex = "tasks.opsnorth.io/job"

// selectTaskJobs restricts a list or watch to the Jobs (and pods) of tasks.
func selectTaskJobs(o *metav1.ListOptions) { o.LabelSelector = jobSelector().String() }

// selectUnfinishedPods restricts a list or watch to the unfinished pods of tasks.
func selectUnfinishedPods(o *metav1.ListOptions) {
	selectTaskJobs(o)
	o.FieldSelector = unfinishedPods.String()
}

// jobSelector selects the Jobs (and their pods) of AgentTasks.
func jobSelector() labels.Selector { return labels.SelectorFromSet(selectorLabels()) }

// trimTask drops what the controller never reads from cached AgentTasks:
// managed fields, labels, annotations (kubectl's last-applied copy among
// them), owners and finalizers.
//
// The spec is read whole only to build the Job, which happens only while the
// task has recorded no Job (ensureJob): once status.jobName is set, the
// cache keeps the ids, the timeouts (for the Timeout message and the start
// deadline) and the webhook URL, so a backlog of tasks with large inputs
// does not hold them twice (the Jobs carry them). A terminal task is never
// observed again (its spec is immutable, so its status is final) and only
// its webhook may still be due, which works from a live read: until the
// task settles and leaves the cache, it keeps only its identity, phase and
// webhook state.
func trimTask(obj any) (any, error) {
	task, ok := obj.(*v1alpha1.AgentTask)
	if !ok {
		return obj, nil
	}
	task.OwnerReferences = nil
	trimMeta(&task.ObjectMeta)
	if st := task.Status; st.Phase.IsTerminal() {
		task.Spec = v1alpha1.AgentTaskSpec{TaskID: task.Spec.TaskID, UserID: task.Spec.UserID, WebhookURL: task.Spec.WebhookURL}
		task.Status = v1alpha1.AgentTaskStatus{Phase: st.Phase, Reason: st.Reason, Webhook: st.Webhook, Settled: st.Settled}
	} else if st.JobName != "" {
		sp := task.Spec
		task.Spec = v1alpha1.AgentTaskSpec{TaskID: sp.TaskID, UserID: sp.UserID, WebhookURL: sp.WebhookURL,
			TimeoutSeconds: sp.TimeoutSeconds, StartTimeoutSeconds: sp.StartTimeoutSeconds, Cancel: sp.Cancel}
		task.Spec.QueueName = sp.QueueName
	}
	internTask(task)
	return task, nil
}

// internTask makes a cached task share the status strings every task
// repeats (phase, condition types, statuses and reasons; trimMeta did the
// namespace) instead of holding its own decoded copies, and its conditions
// share the status message they repeat.
func internTask(task *v1alpha1.AgentTask) {
	st := &task.Status
	st.Phase = v1alpha1.TaskPhase(intern(string(st.Phase)))
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Reason = intern(c.Type), intern(c.Reason)
		c.Status = metav1.ConditionStatus(intern(string(c.Status)))
		if c.Message == st.Message {
			c.Message = st.Message
		}
	}
}

// interned holds the canonical copies of the strings cached objects repeat.
// It is capped: values of unexpected cardinality are kept as they are
// rather than growing it without bound. (unique.Make would not do: its
// canonical copy goes once no Handle is left, i.e. at the next GC, so
// objects decoded after it would hold a new copy.)
var interned = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

// maxInterned bounds interned: namespaces, phases, condition vocabulary and
// owner kinds come to far fewer.
const maxInterned = 4096

// intern returns the canonical copy of s: cached objects share it.
func intern(s string) string {
	interned.RLock()
	c, ok := interned.m[s]
	interned.RUnlock()
	if ok {
		return c
	}
	interned.Lock()
	defer interned.Unlock()
	if c, ok := interned.m[s]; ok {
		return c
	}
	if len(interned.m) >= maxInterned {
		return s
	}
	c = strings.Clone(s)
	interned.m[c] = c
	return c
}

// trimJob keeps a Job's identity, owners (no labels: trimMeta) and the
// status fields the phase is computed from.
func trimJob(obj any) (any, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return obj, nil
	}
	trimMeta(&job.ObjectMeta)
	job.Spec = batchv1.JobSpec{ActiveDeadlineSeconds: job.Spec.ActiveDeadlineSeconds, Suspend: job.Spec.Suspend}
	st := job.Status
	job.Status = batchv1.JobStatus{
		StartTime: st.StartTime, CompletionTime: st.CompletionTime,
		Active: st.Active, Succeeded: st.Succeeded, Failed: st.Failed,
	}
	for _, c := range st.Conditions {
		if c.Status == corev1.ConditionTrue && slices.Contains(decidingJobConditions, c.Type) {
			job.Status.Conditions = append(job.Status.Conditions, c)
		}
	}
	return job, nil
}

// decidingJobConditions are the Job conditions a task's phase follows
// (SuccessCriteriaMet, Suspended and false conditions are not read).
var decidingJobConditions = []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailureTarget}

// trimMeta keeps the metadata of a cached object the controller reads:
// identity, owners and times. Labels go too: the cache selected on them
// already, a pod maps to its task through its Job (named after the task) and
// a task's labels are not read.
func trimMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	m.Annotations = nil
	m.Labels = nil
	m.Finalizers = nil
	m.GenerateName = ""
	m.Namespace = intern(m.Namespace)
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind = intern(ref.APIVersion), intern(ref.Kind)
		if ref.Name == m.Name {
			ref.Name = m.Name // a Job is named after its task
		}
	}
}

// trimPod keeps a pod's identity, owners (no labels: trimMeta) and the parts
// of its status the phase is computed from.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimMeta(&pod.ObjectMeta)
	pod.Spec = corev1.PodSpec{}
	var conds []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget || c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			conds = append(conds, c)
		}
	}
	agent := agentStatus(pod)
	pod.Status = corev1.PodStatus{
		Phase:      pod.Status.Phase,
		Reason:     pod.Status.Reason,
		Message:    pod.Status.Message,
		StartTime:  pod.Status.StartTime,
		Conditions: conds,
	}
	if agent != nil {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:                 agent.Name,
			State:                agent.State,
			LastTerminationState: agent.LastTerminationState,
		}}
	}
	return pod, nil
}

// podJobKey is the podJobIndex function: namespace/name of the pod's Job.
func podJobKey(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if jobs := podJobName(pod); len(jobs) > 0 {
		return []string{pod.Namespace + "/" + jobs[0]}, nil
	}
	return nil, nil
}

// podJobName returns the name of the Job that controls obj, if any.
func podJobName(obj client.Object) []string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "Job" && ref.APIVersion == batchv1.SchemeGroupVersion.String() {
			return []string{ref.Name}
		}
	}
	return nil
}

// newestPod returns the newest pod not being deleted, else the newest pod.
func newestPod(pods []corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	for i := range pods {
		if p := &pods[i]; best == nil || podRank(p, best) {
			best = p
		}
	}
	return best
}

// podRank reports whether a is a better pick than b.
func podRank(a, b *corev1.Pod) bool {
	if aLive, bLive := a.DeletionTimestamp == nil, b.DeletionTimestamp == nil; aLive != bLive {
		return aLive
	}
	return b.CreationTimestamp.Before(&a.CreationTimestamp)
}
