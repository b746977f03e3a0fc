package helm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// TestServerSideDryRun applies the rendered chart, its test's hooks
// included, to a real kube-apiserver with a server-side dry run, for the
// defaults and for variations that change what is rendered, so that every
// object, as the API server's validation, defaulting and admission see it,
// is valid: CRD schemas and CEL rules, policy expressions, RBAC, the pod
// specs. Only the namespaces are created for real (a dry run in a namespace
// that does not exist fails): the release namespace first, as `helm install
// --create-namespace` does.
func TestServerSideDryRun(t *testing.T) {
	cfg := requireAPIServer(t)
	for name, tc := range map[string]struct {
		namespace string
		set       []string
	}{
		"defaults":      {namespace: releaseNamespace},
		"everything on": {namespace: releaseNamespace, set: []string{"monitoring.serviceMonitor.enabled=true", "monitoring.dashboard.enabled=true", "taskNetworkPolicy.extraExcept={203.0.113.10/32,2001:db8::1/128}"}},
		"another release namespace": {namespace: "ops", set: []string{"namespaces.tasks=agents", "managers.deployments.replicas=1",
			"managers.tasks.image.digest=sha256:" + strings.Repeat("0f", 32), "podSecurityContext.runAsUser=1000710000"}},
		"customised": {namespace: releaseNamespace, set: []string{
			"managers.tasks.env[0].name=X", "managers.tasks.env[0].valueFrom.secretKeyRef.name=s", "managers.tasks.env[0].valueFrom.secretKeyRef.key=k",
			"managers.tasks.tolerations[0].key=dedicated", "managers.tasks.tolerations[0].operator=Exists",
			"managers.tasks.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
			"managers.tasks.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
			"managers.tasks.podDisruptionBudget.minAvailable=50%", "managers.tasks.resources.limits.memory=1e9",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			out := renderIn(t, tc.namespace, tc.set...)
			release := &unstructured.Unstructured{}
			release.SetAPIVersion("v1")
			release.SetKind("Namespace")
			release.SetName(tc.namespace)
			dryRunApply(t, cfg, append([]*unstructured.Unstructured{release}, out.all()...))
		})
	}
}

// dryRunApply server-side applies objs with dryRun=All, the Namespaces among
// them for real.
func dryRunApply(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	// Namespaces first, as Helm installs them.
	ordered := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" {
			ordered = append(ordered, obj)
		}
	}
	for _, obj := range objs {
		if obj.GetKind() != "Namespace" {
			ordered = append(ordered, obj)
		}
	}
	for _, obj := range ordered {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		require.NoError(t, err, "the API server serves no %s", gvk)
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		opts := metav1.ApplyOptions{FieldManager: "helm", Force: true, DryRun: []string{metav1.DryRunAll}}
		if obj.GetKind() == "Namespace" {
			opts.DryRun = nil
		}
		_, err = ri.Apply(ctx, obj.GetName(), obj, opts)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		require.NoError(t, err, "server-side dry run of %s", key(obj))
	}
}
