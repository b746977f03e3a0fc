package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// controllerKinds are made by Kubernetes controllers from the manager's
// children, not by the manager: the baseline's kubectl leaves them to the
// same controllers.
var controllerKinds = []string{"Pod", "ReplicaSet", "Event", "Endpoints", "EndpointSlice", "ControllerRevision"}

// childrenOf reads back every object the deployments manager made for the
// given users and rewrites it as a plain manifest of the baseline: in
// namespace "b-<namespace>", labelled with run instead of managed-by, without
// server-set fields. It returns them Namespaces first, with a count by kind.
func childrenOf(ctx context.Context, e *Env, users map[string]bool, run string) ([]*unstructured.Unstructured, map[string]int, error) {
	lists, err := e.Kube.Discovery().ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, nil, fmt.Errorf("discovery: %w", err)
	}
	sel := labelkeys.ManagedBy + "=" + labelkeys.ManagedByValue + "," + labelkeys.User
	var out []*unstructured.Unstructured
	kinds := map[string]int{}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, nil, err
		}
		for _, res := range list.APIResources {
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "list") || slices.Contains(controllerKinds, res.Kind) {
				continue
			}
			objs, err := e.Cluster.Dynamic.Resource(gv.WithResource(res.Name)).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return nil, nil, fmt.Errorf("list %s: %w", res.Name, err)
			}
			for i := range objs.Items {
				obj := &objs.Items[i]
				if !users[obj.GetLabels()[labelkeys.User]] || len(obj.GetOwnerReferences()) > 0 {
					continue
				}
				out = append(out, asBaseline(obj, run))
				kinds[obj.GetKind()]++
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int {
		return boolRank(a.GetKind() != "Namespace") - boolRank(b.GetKind() != "Namespace")
	})
	return out, kinds, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func asBaseline(obj *unstructured.Unstructured, run string) *unstructured.Unstructured {
	c := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range obj.Object {
		if k != "metadata" && k != "status" {
			c.Object[k] = v
		}
	}
	c.SetName(obj.GetName())
	if obj.GetKind() == "Namespace" {
		c.SetName("b-" + obj.GetName())
		unstructured.RemoveNestedField(c.Object, "spec")
	}
	if ns := obj.GetNamespace(); ns != "" {
		c.SetNamespace("b-" + ns)
	}
	c.SetLabels(baselineLabels(obj.GetLabels(), run))
	c.SetAnnotations(obj.GetAnnotations())
	if tl, ok, _ := unstructured.NestedStringMap(c.Object, "spec", "template", "metadata", "labels"); ok && tl[labelkeys.ManagedBy] != "" {
		// The pods stay out of the manager's sight too; selectors do not use managed-by.
		tl[labelkeys.ManagedBy] = "bench-baseline"
		_ = unstructured.SetNestedStringMap(c.Object, tl, "spec", "template", "metadata", "labels")
	}
	if obj.GetKind() == "Service" {
		// Allocated by the API server; a copy must get its own.
		unstructured.RemoveNestedField(c.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(c.Object, "spec", "clusterIPs")
	}
	return c
}

// KubectlApply applies objs with `kubectl apply --server-side` as the admin
// and waits until each of their Deployments has all replicas available; it
// returns the time from the start of kubectl to the last one.
func KubectlApply(ctx context.Context, e *Env, objs []*unstructured.Unstructured, run string, timeout time.Duration) (time.Duration, error) {
	var doc bytes.Buffer
	var deployments []string
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return 0, err
		}
		doc.WriteString("---\n")
		doc.Write(data)
		if o.GetKind() == "Deployment" {
			deployments = append(deployments, o.GetNamespace()+"/"+o.GetName())
		}
	}
	path := filepath.Join(e.Cluster.Dir, "bench-baseline-"+run+".yaml")
	if err := os.WriteFile(path, doc.Bytes(), 0o600); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	if err := deploymentsAvailable(ctx, e, RunLabel+"="+run, st); err != nil {
		return 0, err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, e.Cluster.Binary("kubectl"), "--kubeconfig="+e.Cluster.AdminKubeconfig,
		"apply", "--server-side", "--field-manager=bench-baseline", "-f", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("kubectl apply --server-side: %w: %s", err, out)
	}
	deadline := time.Now().Add(timeout)
	for st.count(stageDone) < len(deployments) {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d baseline Deployments available within %s", st.count(stageDone), len(deployments), timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return st.latest(deployments, stageDone).Sub(start), nil
}
