package agents

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// podAgentIndex indexes the cached pods by "<namespace>/<agent label>".
const podAgentIndex = "agents.ossa.ai/agent"

// podKind caches the Agents' unfinished pods (they carry the pod template's
// labels, ChildSelector among them), trimmed to what podcause reads and
// their Agent's label.
var podKind = manager.KubeKind{Object: &corev1.Pod{}, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
	Select: selectPods, Transform: podcause.Transform(labelkeys.Agent),
	Indexers: toolscache.Indexers{podAgentIndex: podAgentKey}}

func selectPods(o *metav1.ListOptions) {
	selectChildren(o)
	o.FieldSelector = podcause.Unfinished
}

func podAgentKey(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[labelkeys.Agent] == "" {
		return nil, nil
	}
	return []string{pod.Namespace + "/" + pod.Labels[labelkeys.Agent]}, nil
}

// podsOf returns the Agent's cached pods, sorted by name (the cause names
// the first pod that has it); none without a pod cache.
func (r *Reconciler) podsOf(a *ossav1.Agent) ([]*corev1.Pod, error) {
	if r.pods == nil {
		return nil, nil
	}
	objs, err := r.pods.ByIndex(podAgentIndex, a.Namespace+"/"+a.Name)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// podHandler enqueues a pod's Agent only when what keeps the pod from
// running ready changed (podcause.Changed): its creation, scheduling,
// start and readiness carry no news the Deployment's status does not
// bring, nor do the restarts of a crash loop whose last exit stays the same.
func podHandler() handler.EventHandler { return manager.NewsHandler(mapPod, podNews) }

// podNews reports whether a pod's creation (old nil), update or deletion
// (obj nil) changes its cause.
func podNews(old, obj client.Object) bool {
	prev, _ := old.(*corev1.Pod)
	cur, _ := obj.(*corev1.Pod)
	return podcause.Changed(prev, cur)
}

// mapPod maps a pod to the Agent of its agent label, in its namespace.
func mapPod(obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[labelkeys.Agent]
	if name == "" {
		return nil
	}
	return []reconcile.Request{request(obj.GetNamespace(), name)}
}
