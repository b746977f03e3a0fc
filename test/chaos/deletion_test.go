//go:build chaos

package chaos

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/testkit"
)

var massDeletions = flag.Int("chaos.deletions", 200, "UserDeployments deleted at once")

const (
	// udNamespace holds the UserDeployments of the mass deletion.
	udNamespace = "chaos-ud"
	// udsPerUser keeps each user within the default (free) tier's quota:
	// 10 pods and 2 CPUs of limits, 250m a pod by default.
	udsPerUser = 5
)

// TestMassDeletion creates -chaos.deletions image UserDeployments, five per
// user, plus one of a user of its own, waits until all are Ready, plants
// objects someone else made in 20 of the user namespaces (plantAll), deletes
// the lone one (the baseline: one deletion on a quiet manager), then all the
// others at once. It requires that none is left, stuck in deletion or not;
// that every planted object is intact in its kept namespace; and that no
// object with the managed-by label remains anywhere else (nor a user
// namespace without planted objects).
func TestMassDeletion(t *testing.T) {
	c := requireCluster(t)
	const drill = "mass_deletion"
	n := *massDeletions
	record(t, drill, "userdeployments", n)
	_, err := c.Clientset.CoreV1().Namespaces().Create(t.Context(), testkit.MakeBackendNamespace(udNamespace, ""), metav1.CreateOptions{})
	require.NoError(t, err)
	cs := schedulerClient(t)
	uds := cs.SchedulerV1alpha1().UserDeployments(udNamespace)
	start := time.Now()
	parallel(t, n+1, func(i int) error {
		name, user := fmt.Sprintf("app-%03d", i), fmt.Sprintf("chaos-%d", i/udsPerUser)
		if i == n {
			name, user = "solo", "chaos-solo"
		}
		_, err := uds.Create(t.Context(), &v1alpha1.UserDeployment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.UserDeploymentSpec{
				UserID: user, Image: "ghcr.io/opsnorth/hello:2.0.1",
				ContainerPort: ptr.To[int32](8080), Replicas: ptr.To[int32](1),
			},
		}, metav1.CreateOptions{})
		return err
	})
	require.Eventually(t, func() bool {
		list, err := uds.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		ready := 0
		for _, ud := range list.Items {
			if meta.IsStatusConditionTrue(ud.Status.Conditions, "Ready") {
				ready++
			}
		}
		return ready == n+1
	}, 4*time.Minute, time.Second, "every UserDeployment Ready")
	record(t, drill, "seconds_to_all_ready", time.Since(start).Seconds())
	before, err := managedObjects(t, nil)
	require.NoError(t, err)
	record(t, drill, "managed_objects_before", before)
	require.NotEmpty(t, before)
	foreign, kept := plantAll(t, n/udsPerUser)
	record(t, drill, "foreign_objects", len(foreign))
	record(t, drill, "namespaces_with_foreign_objects", len(kept))

	start = time.Now()
	require.NoError(t, uds.Delete(t.Context(), "solo", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := uds.Get(t.Context(), "solo", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 2*time.Minute, 100*time.Millisecond, "the lone UserDeployment is deleted")
	single := time.Since(start)
	record(t, drill, "baseline_single_deletion_seconds", single.Seconds())

	start = time.Now()
	parallel(t, n, func(i int) error {
		return uds.Delete(t.Context(), fmt.Sprintf("app-%03d", i), metav1.DeleteOptions{})
	})
	var remaining atomic.Int64
	allDeleted := assert.Eventually(t, func() bool {
		list, err := uds.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		remaining.Store(int64(len(list.Items)))
		return len(list.Items) == 0
	}, 4*time.Minute, 100*time.Millisecond)
	allGone := time.Since(start)
	var left atomic.Pointer[map[string]int]
	gone := assert.Eventually(t, func() bool {
		objs, err := managedObjects(t, kept)
		if err != nil {
			return false
		}
		left.Store(&objs)
		return len(objs) == 0
	}, 2*time.Minute, time.Second)
	record(t, drill, "seconds_to_all_userdeployments_gone", allGone.Seconds())
	record(t, drill, "all_gone_over_single_ratio", allGone.Seconds()/single.Seconds())
	record(t, drill, "seconds_to_nothing_left", time.Since(start).Seconds())
	leftObjs := map[string]int{"(not listed)": -1}
	if p := left.Load(); p != nil {
		leftObjs = *p
	}
	record(t, drill, "userdeployments_left", remaining.Load())
	record(t, drill, "managed_objects_left", leftObjs)
	lost := lostForeign(t, foreign)
	record(t, drill, "foreign_objects_lost", len(lost))
	assert.True(t, allDeleted, "%d UserDeployments left (stuck in deletion)", remaining.Load())
	assert.True(t, gone, "managed objects left: %v", leftObjs)
	assert.Empty(t, lost, "objects someone else made were deleted")
	for ns := range kept {
		got, err := cluster.Clientset.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if assert.NoError(t, err, "namespace %s with objects of others is kept", ns) {
			assert.Nil(t, got.DeletionTimestamp, "namespace %s is not being deleted", ns)
		}
	}
}

// managedObjects counts, by resource, the objects labelled
// app.kubernetes.io/managed-by=opsnorth-scheduler in every namespace, and
// the namespaces so labelled; in the namespaces of skip, only apps' children. The tasks and workflows managers'
// Jobs, pods and step tasks in agent-tasks (kept by their TTL) are not
// UserDeployments' and are left out, as is the managers' own namespace (the
// workflows step key).
func managedObjects(t *testing.T, skip map[string]bool) (map[string]int, error) {
	t.Helper()
	_, lists, err := cluster.Clientset.Discovery().ServerGroupsAndResources()
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	sel := metav1.ListOptions{LabelSelector: labelkeys.ManagedBy + "=" + labelkeys.ManagedByValue}
	out := map[string]int{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !strings.Contains(strings.Join(r.Verbs, ","), "list") {
				continue
			}
			if !r.Namespaced && r.Name != "namespaces" {
				continue
			}
			objs, err := cluster.Dynamic.Resource(gv.WithResource(r.Name)).List(t.Context(), sel)
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("list %s %s: %w", l.GroupVersion, r.Name, err)
			}
			for _, o := range objs.Items {
				ns := o.GetNamespace()
				if ns == "" && r.Name == "namespaces" {
					ns = o.GetName()
				}
				// A kept namespace keeps its own objects (quota, policies),
				// not an app's children.
				_, appChild := o.GetLabels()[labelkeys.UserDeployment]
				if ns != taskNamespace && ns != localcluster.ManagerNamespace && (!skip[ns] || appChild) {
					out[r.Name+"."+gv.Group]++
				}
			}
		}
	}
	return out, nil
}

// parallel runs fn(0..n-1) on 8 workers and requires every call to succeed.
func parallel(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}
