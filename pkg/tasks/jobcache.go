package tasks

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// jobRecord is what the manager caches of a task's Job: its identity,
// owners, deadline and the status fields the task's phase follows. A
// batchv1.Job struct is 1,320 bytes before any of its strings, most of it
// the (always empty, trimmed) pod template; a record is under 400. With
// 10k tasks that is 10 MB of the tasks manager's live heap, and the
// garbage collector's headroom on top of it.
type jobRecord struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	ActiveDeadlineSeconds *int64
	// Suspend: Kueue has not admitted the Job yet.
	Suspend bool
	Status  batchv1.JobStatus
}

// DeepCopyInto copies the record into out.
func (j *jobRecord) DeepCopyInto(out *jobRecord) {
	out.TypeMeta, out.Suspend = j.TypeMeta, j.Suspend
	j.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.ActiveDeadlineSeconds = nil
	if d := j.ActiveDeadlineSeconds; d != nil {
		out.ActiveDeadlineSeconds = ptr.To(*d)
	}
	j.Status.DeepCopyInto(&out.Status)
}

// DeepCopyObject implements runtime.Object.
func (j *jobRecord) DeepCopyObject() runtime.Object {
	out := &jobRecord{}
	j.DeepCopyInto(out)
	return out
}

// job returns the record as the (trimmed) Job the reconciler reads, a copy
// it may keep. It runs on every reconcile, so it copies straight into the
// Job.
func (j *jobRecord) job() *batchv1.Job {
	out := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"}}
	j.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if d := j.ActiveDeadlineSeconds; d != nil {
		out.Spec.ActiveDeadlineSeconds = ptr.To(*d)
	}
	if j.Suspend {
		out.Spec.Suspend = ptr.To(true)
	}
	j.Status.DeepCopyInto(&out.Status)
	return out
}

// recordJob is the Job informers' transform: a trimmed Job becomes a
// jobRecord, and the decoded Job struct is garbage at once.
func recordJob(obj any) (any, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return obj, nil
	}
	trimmed, err := trimJob(job)
	if err != nil {
		return nil, err
	}
	job = trimmed.(*batchv1.Job)
	return &jobRecord{ObjectMeta: job.ObjectMeta, ActiveDeadlineSeconds: job.Spec.ActiveDeadlineSeconds,
		Suspend: ptr.Deref(job.Spec.Suspend, false), Status: job.Status}, nil
}

// jobStore reads the task Jobs' informers, one per watched namespace (or
// one for all), which hold jobRecords (recordJob is their transform), so no
// generated lister can read them; forget is the one place that writes to an
// informer's store. Both are for the memory goal of 10k tasks.
type jobStore struct {
	informers []toolscache.SharedIndexInformer
}

// get returns the cached Job key, or nil when no informer holds it.
func (s *jobStore) get(key types.NamespacedName) (*batchv1.Job, error) {
	for _, inf := range s.informers {
		obj, exists, err := inf.GetIndexer().GetByKey(key.String())
		if err != nil {
			return nil, fmt.Errorf("read cached job %s: %w", key, err)
		}
		if !exists {
			continue
		}
		rec, ok := obj.(*jobRecord)
		if !ok {
			return nil, fmt.Errorf("cached job %s is a %T", key, obj)
		}
		return rec.job(), nil
	}
	return nil, nil
}

// forget drops the record of Job key: its task settled or is gone, and the
// reconciler never reads the Job again. Records are the bulk of the cache
// once tasks settle (10k finished Jobs held ~18 MB until their TTL).
// Nothing but this store reads the informers' indexers, and a dropped
// record comes back with the Job's next event (or a relist), which
// reconciles its task and drops it again while the task is still gone.
func (s *jobStore) forget(key types.NamespacedName) {
	for _, inf := range s.informers {
		store := inf.GetIndexer()
		if obj, exists, err := store.GetByKey(key.String()); err == nil && exists {
			_ = store.Delete(obj) // the threadSafeMap store never fails
		}
	}
}
