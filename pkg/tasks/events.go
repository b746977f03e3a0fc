package tasks

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// createFailures selects the Job controller's FailedCreate events: the only
// place it says why a Job has no pod (a missing ServiceAccount, exceeded
// quota, Pod Security). The Job's status does not. Other Jobs' events in
// the task namespaces come too; there are few, and they are trimmed.
var createFailures = fields.SelectorFromSet(fields.Set{
	"involvedObject.kind": "Job",
	"reason":              "FailedCreate",
}).String()

func selectCreateFailures(o *metav1.ListOptions) { o.FieldSelector = createFailures }

// eventJobIndex indexes cached events by the namespace/name of their Job.
const eventJobIndex = "tasks.opsnorth.io/event-job"

func eventJobKey(obj any) ([]string, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return nil, nil
	}
	return []string{ev.Namespace + "/" + ev.InvolvedObject.Name}, nil
}

// trimEvent keeps what createFailure reads: the Job, the message and when.
func trimEvent(obj any) (any, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	out := &corev1.Event{
		InvolvedObject: corev1.ObjectReference{Name: ev.InvolvedObject.Name, UID: ev.InvolvedObject.UID},
		Message:        ev.Message,
		LastTimestamp:  ev.LastTimestamp,
		EventTime:      ev.EventTime,
	}
	out.Name, out.Namespace, out.UID, out.ResourceVersion = ev.Name, intern(ev.Namespace), ev.UID, ev.ResourceVersion
	return out, nil
}

// eventTask maps a FailedCreate event to the task its Job is named after.
func eventTask(_ context.Context, obj client.Object) []reconcile.Request {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ev.Namespace, Name: ev.InvolvedObject.Name}}}
}

// createFailure returns the message of the latest FailedCreate event of
// job (this Job, not an earlier one of its name), or "".
func (r *Reconciler) createFailure(job *batchv1.Job) (string, error) {
	var latest *corev1.Event
	for _, idx := range r.events {
		objs, err := idx.ByIndex(eventJobIndex, job.Namespace+"/"+job.Name)
		if err != nil {
			return "", err
		}
		for _, o := range objs {
			ev := o.(*corev1.Event)
			if ev.InvolvedObject.UID == job.UID && (latest == nil || eventTime(latest).Before(eventTime(ev))) {
				latest = ev
			}
		}
	}
	if latest == nil {
		return "", nil
	}
	return latest.Message, nil
}

// eventTime is when ev last happened: a legacy recorder's lastTimestamp,
// else an events.k8s.io recorder's eventTime.
func eventTime(ev *corev1.Event) time.Time {
	if !ev.LastTimestamp.IsZero() {
		return ev.LastTimestamp.Time
	}
	return ev.EventTime.Time
}
