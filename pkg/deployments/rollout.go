package deployments

import (
	"context"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// rollouts are the caches observeRollout reads to say what blocks a
// rollout: the apps' pods, their claims and the claims' events.
type rollouts struct {
	pods   toolscache.Indexer // by podServiceIndex
	claims corelisters.PersistentVolumeClaimLister
	events toolscache.Indexer // by claimEventIndex
}

// appPods selects the pods of the apps' services (render.ServiceLabels).
var appPods = func() labels.Selector {
	sel := ChildSelector()
	for _, key := range []string{labelkeys.UserDeployment, labelkeys.Service} {
		r, _ := labels.NewRequirement(key, selection.Exists, nil)
		sel = sel.Add(*r)
	}
	return sel
}().String()

func selectAppPods(o *metav1.ListOptions) {
	o.LabelSelector = appPods
	o.FieldSelector = podcause.Unfinished
}

// claimEvents selects the events about volume claims: the PV controller and
// external provisioners say there why a claim is not bound (no storage
// class, provisioning failed, waiting for the first consumer); its status
// does not. Claims of other namespaces come too; their events are few, and
// trimmed.
var claimEvents = fields.OneTermEqualSelector("involvedObject.kind", "PersistentVolumeClaim").String()

func selectClaimEvents(o *metav1.ListOptions) { o.FieldSelector = claimEvents }

// Index names of the rollout caches.
const (
	// podServiceIndex indexes pods by namespace/<user-deployment label>/service.
	podServiceIndex = "deployments.opsnorth.io/service"
	// claimEventIndex indexes events by the namespace/name of their claim.
	claimEventIndex = "deployments.opsnorth.io/claim"
)

func serviceKey(namespace, udLabel, service string) string {
	return namespace + "/" + udLabel + "/" + service
}

func podServiceKey(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	return []string{serviceKey(pod.Namespace, pod.Labels[labelkeys.UserDeployment], pod.Labels[labelkeys.Service])}, nil
}

func claimEventKey(obj any) ([]string, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return nil, nil
	}
	return []string{ev.Namespace + "/" + ev.InvolvedObject.Name}, nil
}

// podKind and claimEventKind are the rollout caches' kinds.
var (
	podKind = manager.KubeKind{Object: &corev1.Pod{}, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Select: selectAppPods, Transform: trimPod, Indexers: toolscache.Indexers{podServiceIndex: podServiceKey}}
	claimEventKind = manager.KubeKind{Object: &corev1.Event{}, Resource: corev1.SchemeGroupVersion.WithResource("events"),
		Select: selectClaimEvents, Transform: trimEvent, Indexers: toolscache.Indexers{claimEventIndex: claimEventKey}}
)

// trimPod keeps what podcause.OfPod reads and the pod's service: the
// user-deployment and service labels (podcause.Trim).
var trimPod = podcause.Transform(labelkeys.UserDeployment, labelkeys.Service)

// trimEvent keeps what claimEvent reads: the claim, type, reason, bounded
// message and when.
func trimEvent(obj any) (any, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	out := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: ev.Name, Namespace: ev.Namespace, UID: ev.UID, ResourceVersion: ev.ResourceVersion,
			CreationTimestamp: ev.CreationTimestamp},
		InvolvedObject: corev1.ObjectReference{Name: ev.InvolvedObject.Name, UID: ev.InvolvedObject.UID},
		Type:           ev.Type, Reason: ev.Reason, Message: conditions.Truncate(ev.Message, maxCauseMessage),
		LastTimestamp: ev.LastTimestamp, EventTime: ev.EventTime,
	}
	if ev.Series != nil {
		out.Series = &corev1.EventSeries{LastObservedTime: ev.Series.LastObservedTime}
	}
	return out, nil
}

// eventTime is when ev last happened: a series' last observation, a legacy
// recorder's lastTimestamp, else an events.k8s.io recorder's eventTime.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// tellingEvent picks a claim's most telling event: the latest Warning
// (provisioning failed) over any Normal one (the PV controller repeats
// "waiting for a volume to be created" while an external provisioner
// fails), else the latest.
func tellingEvent(evs []*corev1.Event) *corev1.Event {
	var best *corev1.Event
	for _, ev := range evs {
		warn, bestWarn := ev.Type == corev1.EventTypeWarning, best != nil && best.Type == corev1.EventTypeWarning
		if best == nil || warn && !bestWarn || warn == bestWarn && eventTime(best).Before(eventTime(ev)) {
			best = ev
		}
	}
	return best
}

// serviceRollout gathers what the caches know of the service of Deployment
// d of the app labelled udLabel.
func (r *rollouts) serviceRollout(udLabel string, d *appsv1.Deployment) (serviceRollout, error) {
	svc := d.Labels[labelkeys.Service]
	in := serviceRollout{Service: svc, Deployment: d}
	if svc == "" {
		in.Service = d.Name
	}
	objs, err := r.pods.ByIndex(podServiceIndex, serviceKey(d.Namespace, udLabel, svc))
	if err != nil {
		return in, err
	}
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			in.Pods = append(in.Pods, p)
		}
	}
	slices.SortFunc(in.Pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		cl, err := r.claimState(d.Namespace, v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			return in, err
		}
		in.Claims = append(in.Claims, cl)
	}
	return in, nil
}

func (r *rollouts) claimState(namespace, name string) (claimState, error) {
	cl := claimState{Name: name}
	pvc, err := r.claims.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return cl, nil
	}
	if err != nil {
		return cl, err
	}
	cl.Claim = pvc
	if pvc.Status.Phase == corev1.ClaimBound {
		return cl, nil
	}
	objs, err := r.events.ByIndex(claimEventIndex, namespace+"/"+name)
	if err != nil {
		return cl, err
	}
	evs := make([]*corev1.Event, 0, len(objs))
	for _, o := range objs {
		// Events of an earlier claim of this name are not about this one.
		if ev, ok := o.(*corev1.Event); ok && ev.InvolvedObject.UID == pvc.UID {
			evs = append(evs, ev)
		}
	}
	cl.Event = tellingEvent(evs)
	return cl, nil
}

// podHandler enqueues a pod's UserDeployment only when what keeps the pod
// from running ready (podcause.OfPod) changed: its creation, scheduling, start
// and readiness carry no news the Deployment's status does not bring, nor
// do the restarts of a crash loop whose last exit stays the same.
func (r *Reconciler) podHandler() handler.EventHandler { return manager.NewsHandler(r.mapPod, podNews) }

// podNews reports whether a pod's creation (old nil), update or deletion
// (obj nil) changes its cause.
func podNews(old, obj client.Object) bool {
	prev, _ := old.(*corev1.Pod)
	cur, _ := obj.(*corev1.Pod)
	return podcause.Changed(prev, cur)
}

// mapPod maps a pod to the UserDeployments of its user-deployment label
// (one, unless two keys hash alike).
func (r *Reconciler) mapPod(obj client.Object) []reconcile.Request {
	label := obj.GetLabels()[labelkeys.UserDeployment]
	if label == "" {
		return nil
	}
	uds := r.byIndex(indexKeyLabel, label)
	out := make([]reconcile.Request, 0, len(uds))
	for _, ud := range uds {
		out = append(out, request(ud))
	}
	return out
}

// claimEventHandler enqueues the UserDeployment of an event's claim when
// the event is new, says something new or goes; a repeat (count and time)
// is no news.
func (r *Reconciler) claimEventHandler() handler.EventHandler {
	return manager.NewsHandler(r.mapClaimEvent, claimEventNews)
}

// claimEventNews reports whether an event's creation (old nil), update or
// deletion (obj nil) can change what its claim shows: a repeat, which only
// counts again, cannot.
func claimEventNews(old, obj client.Object) bool {
	a, okA := old.(*corev1.Event)
	b, okB := obj.(*corev1.Event)
	return !okA || !okB || a.Type != b.Type || a.Reason != b.Reason || a.Message != b.Message
}

// mapClaimEvent maps an event to the owner of its claim, when the claim is
// one of the manager's (in the claim cache).
func (r *Reconciler) mapClaimEvent(obj client.Object) []reconcile.Request {
	ev, ok := obj.(*corev1.Event)
	if !ok || r.rollouts == nil {
		return nil
	}
	pvc, err := r.rollouts.claims.PersistentVolumeClaims(ev.Namespace).Get(ev.InvolvedObject.Name)
	if err != nil {
		return nil
	}
	return r.mapChild(context.Background(), pvc)
}
