//go:build e2e

package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// The samples the tests run as users' objects, and their namespaces.
const (
	schedulerGroup = "scheduler.opsnorth.io/v1alpha1"
	sampleApp      = "manifests/samples/userdeployment-hello.yaml"
	// sampleConfiguredApp is an app from a template, with ConfigMaps of
	// env and files and a claim (sampleTemplate first).
	sampleConfiguredApp = "manifests/samples/userdeployment-shop.yaml"
	sampleTemplate      = "manifests/samples/deploymenttemplate-web-app.yaml"
	sampleTask          = "manifests/samples/agenttask-minimal.yaml"
	sampleWorkflow      = "manifests/samples/workflow-research-report.yaml"
	appNamespace        = "agent-tasks"
	taskNamespace       = "agent-tasks"
)

// timeout bounds every wait: generous, the machine is shared.
const timeout = 90 * time.Second

const tick = 200 * time.Millisecond

// kubectl runs the cluster's kubectl as the admin, in the repository root so
// that paths are the documented ones (kustomize/overlays/tasks), and returns
// its combined output.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := requireCluster(t)
	cmd := exec.CommandContext(t.Context(), c.Binary("kubectl"), append([]string{"--kubeconfig=" + c.AdminKubeconfig}, args...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// mustKubectl is kubectl that fails the test on a non-zero exit.
// A write the API server answers "There can be a delay between when
// CustomResourceDefinitions are created and when they are available" (an
// admission policy resolving a kind just installed) is retried, as the
// message asks, for up to 30 seconds.
func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := kubectl(t, args...)
	for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline) &&
		strings.Contains(out, "There can be a delay between when CustomResourceDefinitions are created"); {
		time.Sleep(time.Second)
		out, err = kubectl(t, args...)
	}
	require.NoError(t, err, "kubectl %s:\n%s", strings.Join(args, " "), out)
	return out
}

// applyKustomize applies the kustomize directory dir (relative to the
// repository root) as the kustomizations' comments tell users to:
// `kubectl apply --server-side -k <dir>`.
func applyKustomize(t *testing.T, dir string) {
	t.Helper()
	start := time.Now()
	out := mustKubectl(t, "apply", "--server-side", "-k", dir)
	t.Logf("kubectl apply --server-side -k %s: %d objects in %s", dir, strings.Count(out, "\n"), time.Since(start).Round(time.Millisecond))
}

// render is `kustomize build` of dir (relative to the repository root): the
// objects `kubectl apply -k` and `kubectl delete -k` act on.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	require.NoError(t, err, "kustomize build %s", dir)
	var objs []*unstructured.Unstructured
	for _, res := range resMap.Resources() {
		m, err := res.Map()
		require.NoError(t, err)
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// readSample reads the one object of a manifest file (relative to the
// repository root) into obj.
func readSample(t *testing.T, file string, obj any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, obj), file)
}

// ofKind returns the objects of kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == kind {
			out = append(out, obj)
		}
	}
	return out
}

// describe is "<Kind> <namespace>/<name>" (or "<Kind> <name>").
func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// getter reads objects of any kind, such as rendered ones, from the cluster.
type getter struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// newGetter discovers the cluster's kinds afresh (CRDs applied since are
// found).
func newGetter(t *testing.T) *getter {
	t.Helper()
	c := requireCluster(t)
	return &getter{dyn: c.Dynamic, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Clientset.Discovery()))}
}

// get reads obj's live version.
func (g *getter) get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := g.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		g.mapper.Reset()
		mapping, err = g.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	var ri dynamic.ResourceInterface = g.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = g.dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	return ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
}

// requireLive fails unless every object exists and is not being deleted.
func requireLive(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	g := newGetter(t)
	for _, obj := range objs {
		live, err := g.get(t.Context(), obj)
		require.NoError(t, err, "%s", describe(obj))
		require.Nil(t, live.GetDeletionTimestamp(), "%s is being deleted", describe(obj))
	}
}

// waitGone waits until none of the objects exists.
func waitGone(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	g := newGetter(t)
	for _, obj := range objs {
		waitFor(t, describe(obj)+" gone", func() (bool, string) {
			_, err := g.get(t.Context(), obj)
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			return false, fmt.Sprintf("get: %v", err)
		})
	}
}

// waitFor polls cond every tick until it holds, for at most timeout; cond
// returns whether it holds and, when not, what it saw, which the failure
// reports.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last seen: %s", what, timeout, state)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: %v; last seen: %s", what, t.Context().Err(), state)
		case <-time.After(tick):
		}
	}
}

// waitEstablished waits until every CustomResourceDefinition among objs is
// Established, so objects of its kind can be created.
func waitEstablished(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	args := []string{"wait", "--for=condition=Established", "--timeout=" + timeout.String()}
	for _, crd := range ofKind(objs, "CustomResourceDefinition") {
		args = append(args, "customresourcedefinition/"+crd.GetName())
	}
	if len(args) > 3 {
		mustKubectl(t, args...)
	}
}

// waitAvailable waits until every Deployment among objs is Available: on
// the kwok node, its fake pods passed scheduling and Pod Security admission
// and became ready.
func waitAvailable(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, d := range ofKind(objs, "Deployment") {
		mustKubectl(t, "wait", "-n", d.GetNamespace(), "--for=condition=Available", "--timeout="+timeout.String(), "deployment/"+d.GetName())
	}
}

// managerSeq numbers manager processes: names must be unique in a cluster.
var managerSeq atomic.Int32

// startManagers starts one local process per component as the packaging
// installed that manager: it finds the component's Deployment in namespace
// (label app.kubernetes.io/component=<component>), requires the
// ServiceAccount it names to exist (the packaging must create it), and runs
// the manager binary authenticated as that ServiceAccount with the
// Deployment's literal env and mounted ConfigMap files
// (localcluster.PackagedManagerFrom). The processes
// are stopped when the test ends.
func startManagers(t *testing.T, namespace string, components ...string) map[string]*localcluster.Manager {
	t.Helper()
	c := requireCluster(t)
	packaged := map[string]localcluster.PackagedManager{}
	for _, comp := range components {
		list, err := c.Clientset.AppsV1().Deployments(namespace).List(t.Context(),
			metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=" + comp})
		require.NoError(t, err)
		require.Len(t, list.Items, 1, "one Deployment of the %s manager in %s", comp, namespace)
		p, err := localcluster.PackagedManagerFrom(t.Context(), c.Clientset, &list.Items[0])
		require.NoError(t, err, "the files the %s Deployment mounts", comp)
		_, err = c.Clientset.CoreV1().ServiceAccounts(p.Namespace).Get(t.Context(), p.ServiceAccount, metav1.GetOptions{})
		require.NoError(t, err, "the ServiceAccount %s/%s the %s Deployment names", p.Namespace, p.ServiceAccount, comp)
		packaged[comp] = p
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	started := map[string]*localcluster.Manager{}
	start := time.Now()
	for comp, p := range packaged {
		wg.Go(func() {
			name := fmt.Sprintf("%s-%d", comp, managerSeq.Add(1))
			m, err := c.StartPackagedManager(t.Context(), name, comp, bins[comp], p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("start the %s manager as %s/%s: %w", comp, p.Namespace, p.ServiceAccount, err))
				return
			}
			started[comp] = m
		})
	}
	wg.Wait()
	for _, m := range started {
		t.Cleanup(func() { stopManager(t, m) })
	}
	require.NoError(t, errors.Join(errs...))
	t.Logf("started the managers %s in %s", strings.Join(components, ", "), time.Since(start).Round(time.Millisecond))
	return started
}

// stopManager stops a manager process, as the kubelet stops the pods of a
// deleted Deployment; stopping one already stopped does nothing.
func stopManager(t *testing.T, m *localcluster.Manager) {
	t.Helper()
	if err := m.Process.Stop(10 * time.Second); err != nil && !localcluster.OnlyKilled(err) {
		t.Errorf("stop %s: %v", m.Process.Name, err)
	}
}

// requireNoRBACRefusal fails if a manager's log shows the API server's
// authorizer refusing it: the packaging must grant each manager all it
// needs.
func requireNoRBACRefusal(t *testing.T, managers ...*localcluster.Manager) {
	t.Helper()
	for _, m := range managers {
		data, err := os.ReadFile(m.Process.LogPath)
		require.NoError(t, err)
		for line := range strings.SplitSeq(string(data), "\n") {
			// The authorizer's refusal names the user; other "forbidden"
			// answers (an admission policy's, a terminating namespace) are
			// not about RBAC.
			if strings.Contains(line, `is forbidden: User \"system:serviceaccount:`) ||
				strings.Contains(line, `is forbidden: User "system:serviceaccount:`) {
				t.Fatalf("the %s manager was refused by RBAC: %s", m.Component, line)
			}
		}
	}
}
