package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// DeploymentNamespace holds the benchmark's UserDeployments.
const DeploymentNamespace = "bench-ud"

// Deployments is D UserDeployments to Ready against `kubectl apply
// --server-side` of the same child objects, read back from the cluster.
type Deployments struct {
	N            int     `json:"n"`
	WallSeconds  float64 `json:"wallSeconds"`
	CreateToDone Dist    `json:"createToReady"`
	// Baseline: the managed children, copied to fresh namespaces and applied by kubectl.
	Children            map[string]int `json:"children"`
	BaselineWallSeconds float64        `json:"baselineWallSeconds"`
	WallRatio           float64        `json:"wallRatio"`
	Writes              Writes         `json:"writes"`
}

// UserDeploymentsToReady creates d raw-image UserDeployments at once, each
// for its own user, and waits until every one is Ready.
func UserDeploymentsToReady(ctx context.Context, e *Env, run string, d, workers int, timeout time.Duration) (Throughput, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DeploymentNamespace}}
	if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Throughput{}, err
	}
	st := newStamps()
	names := objectNames("bd-"+run, d)
	err := Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Sched.SchedulerV1alpha1().UserDeployments(DeploymentNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: RunLabel + "=" + run})
	}, func(ev watch.Event, at time.Time) {
		ud, ok := ev.Object.(*v1alpha1.UserDeployment)
		if ok && meta.IsStatusConditionTrue(ud.Status.Conditions, "Ready") {
			st.mark(ud.Name, stageDone, at)
		}
	})
	if err != nil {
		return Throughput{}, err
	}
	created, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, name string) error {
		_, err := e.Sched.SchedulerV1alpha1().UserDeployments(DeploymentNamespace).Create(ctx, benchDeployment(name, run), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return Throughput{}, fmt.Errorf("user deployments: %w", err)
	}
	return result("UserDeployment", st, names, created, wall, stageDone), nil
}

func benchDeployment(name, run string) *v1alpha1.UserDeployment {
	return &v1alpha1.UserDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DeploymentNamespace, Labels: map[string]string{RunLabel: run}},
		Spec: v1alpha1.UserDeploymentSpec{
			UserID:        name,
			Image:         "registry.example/bench/web:1",
			ContainerPort: ptr.To[int32](8080),
			Replicas:      ptr.To[int32](1),
		},
	}
}

// deploymentsAvailable watches the Deployments labelled with the baseline's
// run and stamps each when all its replicas are available.
func deploymentsAvailable(ctx context.Context, e *Env, selector string, st *stamps) error {
	return Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Kube.AppsV1().Deployments(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	}, func(ev watch.Event, at time.Time) {
		d, ok := ev.Object.(*appsv1.Deployment)
		if ok && d.Spec.Replicas != nil && d.Status.AvailableReplicas == *d.Spec.Replicas && d.Status.ObservedGeneration == d.Generation {
			st.mark(d.Namespace+"/"+d.Name, stageDone, at)
		}
	})
}

// baselineLabels are the labels a baseline child carries instead of the
// manager's managed-by, so the deployments manager never sees it.
func baselineLabels(in map[string]string, run string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		out[k] = v
	}
	out[labelkeys.ManagedBy] = "bench-baseline"
	out[RunLabel] = run
	return out
}

// RunDeployments measures d UserDeployments to Ready, the deployments
// manager's writes for them, and the kubectl baseline over their children.
func RunDeployments(ctx context.Context, e *Env, run string, d, workers int, timeout time.Duration) (*Deployments, error) {
	m := e.Managers["deployments"]
	before, err := RestCounts(ctx, m)
	if err != nil {
		return nil, err
	}
	t, err := UserDeploymentsToReady(ctx, e, run, d, workers, timeout)
	if err != nil {
		return nil, err
	}
	after, err := RestCounts(ctx, m)
	if err != nil {
		return nil, err
	}
	users := map[string]bool{}
	for _, n := range objectNames("bd-"+run, d) {
		users[n] = true
	}
	objs, kinds, err := childrenOf(ctx, e, users, run+"b")
	if err != nil {
		return nil, err
	}
	base, err := KubectlApply(ctx, e, objs, run+"b", timeout)
	if err != nil {
		return nil, err
	}
	w := diff(after, before)
	return &Deployments{
		N:                   d,
		WallSeconds:         t.WallSeconds,
		CreateToDone:        t.CreateToDone,
		Children:            kinds,
		BaselineWallSeconds: base.Seconds(),
		WallRatio:           ratio(t.WallSeconds, base.Seconds()),
		Writes:              Writes{Manager: "deployments", Methods: w, Writes: writes(w), PerUnit: ratio(writes(w), float64(d)), Unit: "UserDeployment"},
	}, nil
}
