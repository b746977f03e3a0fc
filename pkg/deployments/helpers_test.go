package deployments_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

const wait = 60 * time.Second

// domain is the deployment domain the tests' managers run with.
const domain = "apps.example.com"

// startManager runs the deployments manager in-process as its binary runs
// (testkit.StartManager) as the identity of base, reconciling the
// UserDeployments of namespace (a comma-separated list), with args.
func startManager(t *testing.T, base *rest.Config, namespace string, args ...string) *testkit.Manager {
	t.Helper()
	releaseHostsAtEnd(t, strings.Split(namespace, ","))
	return testkit.StartManager(t, base, deployments.NewComponent(),
		append([]string{"--deployment-domain=" + domain, "--watch-namespace=" + namespace}, args...)...)
}

// releaseHostsAtEnd deletes the host claims of the apps of namespaces once
// the test's managers stopped: the tests share one API server and reuse app
// names, and a test's apps outlive it.
func releaseHostsAtEnd(t *testing.T, namespaces []string) {
	t.Helper()
	c := newClient(t)
	t.Cleanup(func() {
		var claims coordinationv1.LeaseList
		require.NoError(t, c.List(context.Background(), &claims, client.InNamespace(testkit.ManagerNamespace),
			client.MatchingLabels{labelkeys.HostClaim: labelkeys.HostClaimValue}))
		for i := range claims.Items {
			holder, _, _ := strings.Cut(ptr.Deref(claims.Items[i].Spec.HolderIdentity, ""), "/")
			if slices.Contains(namespaces, holder) {
				require.NoError(t, client.IgnoreNotFound(c.Delete(context.Background(), &claims.Items[i])))
			}
		}
	})
}

// settle is how long a test keeps watching for something that must not
// happen (a write, a child) after the manager had its chance to do it: a
// reconcile may trail that long on the loaded machine.
const settle = 5 * time.Second

// newClient returns an admin client that knows the scheduler API.
func newClient(t *testing.T) client.Client {
	t.Helper()
	env := testenv.Require(t)
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	require.NoError(t, apiextensionsv1.AddToScheme(scheme))
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	return c
}

// newNamespace creates a namespace for a test's UserDeployments.
func newNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := testkit.MakeBackendNamespace("apps-"+rand.String(6), "")
	require.NoError(t, c.Create(t.Context(), ns))
	return ns.Name
}

func userID(prefix string) string { return prefix + "-" + rand.String(5) }

func getUD(t *testing.T, c client.Client, ns, name string) *v1alpha1.UserDeployment {
	t.Helper()
	var ud v1alpha1.UserDeployment
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &ud))
	return &ud
}

// waitPhase waits until the deployment reports phase for its current generation.
func waitPhase(t *testing.T, c client.Client, ns, name string, phase v1alpha1.DeploymentPhase) *v1alpha1.UserDeployment {
	t.Helper()
	var last v1alpha1.UserDeployment
	require.Eventually(t, func() bool {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &last); err != nil {
			return false
		}
		return last.Status.Phase == phase && last.Status.ObservedGeneration == last.Generation
	}, wait, 200*time.Millisecond, "phase %s of %s/%s; last status: %+v", phase, ns, name, &last.Status)
	return &last
}

// markReady plays the Deployment controller: every Deployment of the
// deployment reports all its replicas ready.
func markReady(t *testing.T, c client.Client, userNS, udKey string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var list appsv1.DeploymentList
		if err := c.List(context.Background(), &list, client.InNamespace(userNS),
			client.MatchingLabels{labelkeys.UserDeployment: render.KeyLabel(udKey)}); err != nil || len(list.Items) == 0 {
			return false
		}
		for i := range list.Items {
			d := &list.Items[i]
			n := int32(1)
			if d.Spec.Replicas != nil {
				n = *d.Spec.Replicas
			}
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
				ReadyReplicas: n, AvailableReplicas: n}
			if err := c.Status().Update(context.Background(), d); err != nil {
				return false
			}
		}
		return true
	}, wait, 200*time.Millisecond)
}

// managedKinds are every kind the manager may create.
var managedKinds = []schema.GroupVersionKind{
	render.GVKNamespace, render.GVKResourceQuota, render.GVKLimitRange, render.GVKConfigMap, render.GVKService,
	render.GVKPVC, render.GVKDeployment, render.GVKHPA, render.GVKNetworkPolicy, render.GVKIngress,
	render.GVKIngressRoute, render.GVKExternalSecret, render.GVKServiceMonitor,
}

// managedObjects lists "Kind/name" of every object with the managed-by label
// for user, across the kinds the manager creates, leaving out terminating
// ones: envtest runs no namespace or pvc-protection controller, so a deleted
// namespace or PVC keeps its finalizer there forever.
func managedObjects(t *testing.T, c client.Client, user string) []string {
	t.Helper()
	var out []string
	for _, gvk := range managedKinds {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := c.List(context.Background(), &list, client.MatchingLabels{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.User: user})
		if apierrors.IsNotFound(err) || isNoMatch(err) {
			continue
		}
		require.NoError(t, err)
		for _, o := range list.Items {
			if o.GetDeletionTimestamp() == nil {
				out = append(out, gvk.Kind+"/"+o.GetName())
			}
		}
	}
	sort.Strings(out)
	return out
}

func isNoMatch(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no matches for kind")
}

func getU(t *testing.T, c client.Client, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	return u, err
}

// waitObject waits until the object exists and check passes.
func waitObject(t *testing.T, c client.Client, gvk schema.GroupVersionKind, ns, name string, check func(u *unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var last *unstructured.Unstructured
	require.Eventually(t, func() bool {
		u, err := getU(t, c, gvk, ns, name)
		if err != nil {
			return false
		}
		last = u
		return check == nil || check(u)
	}, wait, 200*time.Millisecond, "%s %s/%s", gvk.Kind, ns, name)
	return last
}

func nested(u *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}

// condition is "<status>/<reason>: <message>" of a condition, "" when absent.
func condition(ud *v1alpha1.UserDeployment, t string) string {
	c := meta.FindStatusCondition(ud.Status.Conditions, t)
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

// waitEvent waits for an Event of the deployments manager about the
// deployment name with reason and a note containing text, and returns the note.
func waitEvent(t *testing.T, c client.Client, ns, name, reason, text string) string {
	t.Helper()
	var note string
	require.Eventually(t, func() bool {
		var evs eventsv1.EventList
		if c.List(context.Background(), &evs, client.InNamespace(ns)) != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == name && e.Reason == reason && strings.Contains(e.Note, text) &&
				e.ReportingController == "opsnorth-scheduler-deployments" {
				note = e.Note
				return true
			}
		}
		return false
	}, wait, 200*time.Millisecond, "event %s about %s/%s naming %q", reason, ns, name, text)
	return note
}

// deleteUD deletes the deployment and waits until its finalizer let it go.
func deleteUD(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	require.NoError(t, c.Delete(context.Background(), getUD(t, c, ns, name)))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &v1alpha1.UserDeployment{}))
	}, wait, 200*time.Millisecond, "UserDeployment %s/%s never went", ns, name)
}
