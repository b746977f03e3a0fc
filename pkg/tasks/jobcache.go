package tasks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	batchclient "k8s.io/client-go/kubernetes/typed/batch/v1"
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
	Status                batchv1.JobStatus
}

// DeepCopyInto copies the record into out.
func (j *jobRecord) DeepCopyInto(out *jobRecord) {
	out.TypeMeta = j.TypeMeta
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
	return &jobRecord{ObjectMeta: job.ObjectMeta, ActiveDeadlineSeconds: job.Spec.ActiveDeadlineSeconds, Status: job.Status}, nil
}

// jobStore is the manager's cache of task Jobs: one informer per watched
// namespace (or one for all), listing only Jobs with the task labels,
// holding jobRecords. It is built on the batch/v1 client alone: a client-go
// informer factory or the whole clientset would link every API group's
// informers and clients into the binary (+26 MB, which the process then
// maps and pages in: +13 MiB of RSS).
type jobStore struct {
	informers []toolscache.SharedIndexInformer
}

// newJobStore builds the Job informers for namespaces (none: all
// namespaces). They run with the manager (Start).
func newJobStore(batch batchclient.JobsGetter, namespaces []string) (*jobStore, error) {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	selector := jobSelector().String()
	s := &jobStore{}
	for _, ns := range namespaces {
		jobs := batch.Jobs(ns)
		lw := &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = selector
				return jobs.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = selector
				return jobs.Watch(ctx, o)
			},
		}
		inf := toolscache.NewSharedIndexInformer(lw, &batchv1.Job{}, 0, toolscache.Indexers{})
		if err := inf.SetTransform(recordJob); err != nil {
			return nil, fmt.Errorf("set job informer transform: %w", err)
		}
		s.informers = append(s.informers, inf)
	}
	return s, nil
}

// Start runs the informers until ctx ends; it is a manager runnable (on
// every replica: NeedLeaderElection) and readyz waits for Synced.
func (s *jobStore) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, inf := range s.informers {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	wg.Wait()
	return nil
}

// NeedLeaderElection reports false: standbys keep their caches warm.
func (s *jobStore) NeedLeaderElection() bool { return false }

// Synced is a healthz.Checker that passes once every informer has synced.
func (s *jobStore) Synced(_ *http.Request) error {
	for _, inf := range s.informers {
		if !inf.HasSynced() {
			return errors.New("job informer not synced")
		}
	}
	return nil
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
