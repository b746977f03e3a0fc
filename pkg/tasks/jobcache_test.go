package tasks

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/pkg/testenv"
)

// TestRecordJob: a cached Job record gives back the trimmed Job the
// reconciler reads, and what it returns is a copy.
func TestRecordJob(t *testing.T) {
	full := BuildJob(fullTask(), DefaultConfig(), nil)
	full.UID, full.ResourceVersion = "uid-1", "42"
	full.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	started := metav1.NewTime(time.Now().Truncate(time.Second))
	full.Status = batchv1.JobStatus{
		StartTime: &started, Active: 1, Ready: ptr.To[int32](1),
		Conditions: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "DeadlineExceeded"), {Type: batchv1.JobComplete, Status: corev1.ConditionFalse}},
	}
	trimmed, err := trimJob(full.DeepCopy())
	require.NoError(t, err)
	want := trimmed.(*batchv1.Job)
	want.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}

	rec, err := recordJob(full.DeepCopy())
	require.NoError(t, err)
	r := rec.(*jobRecord)
	got := r.job()
	assert.Equal(t, want, got)
	assert.Equal(t, "uid-1", string(got.UID))
	assert.Equal(t, int64(600), *got.Spec.ActiveDeadlineSeconds)
	require.Len(t, got.Status.Conditions, 1, "only the true deciding conditions")

	got.Status.Conditions[0].Reason = "changed"
	*got.Spec.ActiveDeadlineSeconds = 1
	got.OwnerReferences[0].Name = "changed"
	again := r.job()
	assert.Equal(t, "DeadlineExceeded", again.Status.Conditions[0].Reason, "the record is not shared with its readers")
	assert.Equal(t, int64(600), *again.Spec.ActiveDeadlineSeconds)
	assert.Equal(t, full.OwnerReferences[0].Name, again.OwnerReferences[0].Name)

	other, err := recordJob(&corev1.Pod{})
	require.NoError(t, err)
	assert.IsType(t, &corev1.Pod{}, other, "anything else passes through")
}

// TestJobStoreForget: a forgotten record leaves the cache and comes back
// with the Job's next event.
func TestJobStoreForget(t *testing.T) {
	env := testenv.Require(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	const namespace = "tasks-jobstore"
	_, err = cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	require.NoError(t, err)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace), informers.WithTweakListOptions(selectTaskJobs))
	inf := f.Batch().V1().Jobs().Informer()
	require.NoError(t, inf.SetTransform(recordJob))
	store := &jobStore{informers: []toolscache.SharedIndexInformer{inf}}
	ctx, cancel := context.WithCancel(t.Context())
	f.Start(ctx.Done())
	defer func() { cancel(); f.Shutdown() }()

	job := BuildJob(fullTask(), DefaultConfig(), nil)
	job.Namespace, job.OwnerReferences = namespace, nil
	key := types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
	job, err = cs.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
	require.NoError(t, err)
	cached := func() bool {
		got, err := store.get(key)
		return err == nil && got != nil
	}
	require.Eventually(t, cached, 10*time.Second, 10*time.Millisecond, "the Job was never cached")

	store.forget(key)
	assert.False(t, cached(), "a forgotten record is gone")
	store.forget(key) // forgetting twice is harmless

	metav1.SetMetaDataAnnotation(&job.ObjectMeta, "example.com/touched", "yes")
	_, err = cs.BatchV1().Jobs(job.Namespace).Update(ctx, job, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Eventually(t, cached, 10*time.Second, 10*time.Millisecond, "the Job's next event caches it again")
}
