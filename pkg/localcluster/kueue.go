package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// Kueue (sigs.k8s.io/kueue) run for real against a local cluster: its manager
// binary, built and cached by scripts/kueue.sh, as a supervised process with
// the admin kubeconfig, and its CRDs.
const (
	// KueueNamespace is Kueue's own namespace, as its release manifests
	// install it: the webhook Secret lives there.
	KueueNamespace = "kueue-system"
	// KueueQueueLabel names the LocalQueue a Job is submitted to.
	KueueQueueLabel = "kueue.x-k8s.io/queue-name"

	// The webhook Service and Secret names of Kueue's release manifests,
	// which its certificate rotator looks for.
	kueueWebhookService = "kueue-webhook-service"
	kueueWebhookSecret  = "kueue-webhook-server-cert"
)

// kueueConversionCRDs are the CRDs Kueue's release manifests give a
// conversion webhook (config/components/crd/kustomization.yaml) and whose
// caBundle Kueue's certificate rotator injects (pkg/util/cert): while one
// lacks spec.conversion.webhook the rotator never reports the certificates
// ready, and Kueue never starts its manager.
var kueueConversionCRDs = []string{"localqueues", "clusterqueues", "cohorts", "workloads", "multikueueclusters"}

var kueueGV = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// KueueBinary returns the Kueue manager scripts/kueue.sh has cached for the
// repository at root, and the directory of Kueue's CRDs beside it, without
// building anything. The error wraps fs.ErrNotExist while it is not built
// (`make kueue`).
func KueueBinary(root string) (bin, crdDir string, err error) {
	out, err := exec.Command(filepath.Join(root, "scripts", "kueue.sh"), "path").Output()
	if err != nil {
		return "", "", fmt.Errorf("scripts/kueue.sh path: %w", err)
	}
	bin = strings.TrimSpace(string(out))
	if _, err := os.Stat(bin); err != nil {
		return "", "", fmt.Errorf("kueue manager not built (make kueue): %w", err)
	}
	return bin, filepath.Join(filepath.Dir(bin), "crds"), nil
}

// StartKueue installs Kueue's CRDs from crdDir, runs the Kueue manager bin as
// the process "kueue" (one per cluster) with the admin kubeconfig, and waits
// until its /readyz answers, at most two minutes.
//
// Kueue runs as its release manifests configure it, with these differences
// (the Configuration is <Dir>/kueue/config.yaml):
//   - only the batch/job integration, and only Jobs that name a LocalQueue
//     (manageJobsWithoutQueueName: false);
//   - no leader election; metrics, health and webhook server on free
//     loopback ports; no visibility API server (VisibilityOnDemand off: it
//     would be an aggregated API server on port 8082);
//   - internal certificate management stays on. Turned off, Kueue v0.17
//     reads its metrics certificate from the fixed path
//     /etc/kueue/metrics/certs and exits when it is missing. On, it needs what
//     its manifests install (the empty Secret kueue-system/
//     kueue-webhook-server-cert, the conversion webhook stanza of five CRDs)
//     and a serving certificate in the webhook certificate directory, where
//     a kubelet would mount that Secret: StartKueue writes one issued by the
//     cluster CA. The rotator fills the Secret and injects its own CA into the
//     CRDs; nothing calls Kueue's webhooks (no webhook configurations are
//     installed and its Service does not exist), so Jobs must be created
//     with spec.suspend: true and the queue label, as Kueue's mutating webhook
//     would have made them;
//   - those five CRDs serve only v1beta2, the version Kueue uses, so that the
//     apiserver never needs the conversion webhook (see withKueueConversion).
func (c *Cluster) StartKueue(ctx context.Context, bin, crdDir string) (*Process, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	dir := c.layout.path("kueue")
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("create kueue dir: %w", err)
	}
	if err := c.installKueueCRDs(ctx, crdDir, filepath.Join(dir, "crds.yaml")); err != nil {
		return nil, err
	}
	if err := c.createKueueSecret(ctx); err != nil {
		return nil, err
	}
	serving, err := c.pki.CA.issue(certSpec{
		CommonName: kueueWebhookService + "." + KueueNamespace + ".svc",
		DNSNames:   []string{kueueWebhookService + "." + KueueNamespace + ".svc", "localhost"},
		IPs:        []net.IP{net.IPv4(127, 0, 0, 1)},
		Server:     true,
	}, time.Now())
	if err != nil {
		return nil, err
	}
	if _, _, err := serving.write(certDir, "tls"); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	healthAddr := net.JoinHostPort(host, strconv.Itoa(ports[1]))
	config := kueueConfig(net.JoinHostPort(host, strconv.Itoa(ports[0])), healthAddr, ports[2], certDir)
	configPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return nil, fmt.Errorf("write kueue config: %w", err)
	}
	p, err := c.StartProcess("kueue", bin, []string{"--config=" + configPath, "--kubeconfig=" + c.AdminKubeconfig}, nil)
	if err != nil {
		return nil, err
	}
	if err := waitHealthy(ctx, p, probe{URL: "http://" + healthAddr + "/readyz", Want: "ok", Client: insecureClient()}); err != nil {
		return nil, err
	}
	return p, nil
}

// kueueConfig is Kueue's Configuration (config.kueue.x-k8s.io/v1beta2; see
// StartKueue for why each setting).
func kueueConfig(metricsAddr, healthAddr string, webhookPort int, certDir string) string {
	return fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
manageJobsWithoutQueueName: false
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: true
  webhookServiceName: %s
  webhookSecretName: %s
webhook:
  host: %s
  port: %d
  certDir: %q
metrics:
  bindAddress: %q
health:
  healthProbeBindAddress: %q
integrations:
  frameworks:
  - batch/job
featureGates:
  VisibilityOnDemand: false
`, KueueNamespace, kueueWebhookService, kueueWebhookSecret, host, webhookPort, certDir, metricsAddr, healthAddr)
}

// installKueueCRDs applies every CRD of crdDir, with the conversion webhook
// stanza Kueue's release manifests add to kueueConversionCRDs, through a
// copy written to path.
func (c *Cluster) installKueueCRDs(ctx context.Context, crdDir, path string) error {
	files, err := ManifestFiles(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		return fmt.Errorf("kueue CRDs: %w", err)
	}
	var out []byte
	for _, f := range files {
		docs, err := readDocuments(f)
		if err != nil {
			return err
		}
		for _, doc := range docs {
			crd := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &crd.Object); err != nil {
				return fmt.Errorf("parse %s: %w", f, err)
			}
			resource, _, _ := strings.Cut(crd.GetName(), ".")
			if crd.GetKind() == "CustomResourceDefinition" && slices.Contains(kueueConversionCRDs, resource) {
				if err := withKueueConversion(crd); err != nil {
					return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
				}
			}
			data, err := yaml.Marshal(crd.Object)
			if err != nil {
				return fmt.Errorf("encode CRD %s: %w", crd.GetName(), err)
			}
			out = append(append(out, "---\n"...), data...)
		}
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := c.Apply(ctx, path); err != nil {
		return fmt.Errorf("install kueue CRDs: %w", err)
	}
	return nil
}

// withKueueConversion gives a CRD the conversion webhook of
// config/components/crd/patches/webhook_in_*.yaml, with the names the
// release manifests give the Service, and stops serving its versions other
// than the storage version (v1beta2; v1beta1 is deprecated). kube-apiserver
// keeps a watch cache per served version, fed from etcd through conversion:
// with v1beta1 served, its cache called the unreachable webhook for every
// change of a ClusterQueue, LocalQueue or Workload and retried at once,
// some 300 failed conversions a second while Kueue ran. With only the
// storage version served nothing ever converts.
func withKueueConversion(crd *unstructured.Unstructured) error {
	conversion := map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"clientConfig": map[string]any{
				"service": map[string]any{"namespace": KueueNamespace, "name": kueueWebhookService, "path": "/convert"},
			},
			"conversionReviewVersions": []any{"v1"},
		},
	}
	if err := unstructured.SetNestedMap(crd.Object, conversion, "spec", "conversion"); err != nil {
		return err
	}
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		return err
	}
	for _, raw := range versions {
		if v, ok := raw.(map[string]any); ok && v["storage"] != true {
			v["served"] = false
		}
	}
	return unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")
}

// createKueueSecret creates Kueue's namespace and its empty webhook Secret
// (config/components/internalcert), which the certificate rotator fills.
func (c *Cluster) createKueueSecret(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", KueueNamespace, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: KueueNamespace, Name: kueueWebhookSecret}}
	if _, err := c.Clientset.CoreV1().Secrets(KueueNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create secret %s/%s: %w", KueueNamespace, kueueWebhookSecret, err)
	}
	return nil
}

// sharedLocalQueue is a LocalQueue every user's AgentTasks may name: the
// tasks manager refuses a queue labelled for neither the task's user nor
// sharing, as it does a Secret.
func sharedLocalQueue(namespace, name, clusterQueue string) *unstructured.Unstructured {
	lq := kueueObject("LocalQueue", namespace, name, map[string]any{"clusterQueue": clusterQueue})
	lq.SetLabels(map[string]string{labelkeys.Shared: labelkeys.SharedValue})
	return lq
}

// CreateKueueQueue makes the shared LocalQueue name in namespace admit at most
// maxPods pods at a time (so maxPods single-pod Jobs), and waits until Kueue
// reports it Active (Kueue must run), at most a minute. It applies a ResourceFlavor and a
// ClusterQueue, both named <namespace>-<name>, the ClusterQueue taking
// workloads from that namespace only.
//
// The limit is a quota on the resource "pods", which Kueue supports as a
// covered resource: its flavor assigner counts a pod set's pod count as
// "pods" when the ClusterQueue covers it (pkg/scheduler/flavorassigner), so
// the limit holds whatever the pods request. A workload requesting a resource
// its ClusterQueue does not cover is never admitted, so the ClusterQueue
// also covers cpu and memory, with the kwok node's capacity as quota (1000
// CPUs, 1Ti); pods requesting anything else (GPUs, ephemeral-storage) wait
// forever.
func (c *Cluster) CreateKueueQueue(ctx context.Context, namespace, name string, maxPods int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cq := namespace + "-" + name
	objects := []*unstructured.Unstructured{
		kueueObject("ResourceFlavor", "", cq, map[string]any{}),
		kueueObject("ClusterQueue", "", cq, map[string]any{
			"namespaceSelector": map[string]any{
				"matchLabels": map[string]any{corev1.LabelMetadataName: namespace},
			},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", "pods"},
				"flavors": []any{map[string]any{
					"name": cq,
					"resources": []any{
						map[string]any{"name": "cpu", "nominalQuota": "1000"},
						map[string]any{"name": "memory", "nominalQuota": "1Ti"},
						map[string]any{"name": "pods", "nominalQuota": int64(maxPods)},
					},
				}},
			}},
		}),
		sharedLocalQueue(namespace, name, cq),
	}
	for _, obj := range objects {
		if err := c.applyKueueObject(ctx, obj); err != nil {
			return err
		}
	}
	lq := c.Dynamic.Resource(kueueGV.WithResource("localqueues")).Namespace(namespace)
	return poll(ctx, "LocalQueue "+namespace+"/"+name+" Active", func(ctx context.Context) (bool, error) {
		u, err := lq.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
		if err != nil {
			return false, err
		}
		for _, raw := range conds {
			cond, _ := raw.(map[string]any)
			if cond["type"] == "Active" {
				if cond["status"] == string(metav1.ConditionTrue) {
					return true, nil
				}
				return false, fmt.Errorf("not active: %v: %v", cond["reason"], cond["message"])
			}
		}
		return false, errors.New("no Active condition yet")
	})
}

func kueueObject(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetGroupVersionKind(kueueGV.WithKind(kind))
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// applyKueueObject server-side applies obj as the admin (field manager FieldManager).
func (c *Cluster) applyKueueObject(ctx context.Context, obj *unstructured.Unstructured) error {
	data, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode %s: %w", describe(obj), err)
	}
	resource := strings.ToLower(obj.GetKind()) + "s"
	res := c.Dynamic.Resource(kueueGV.WithResource(resource))
	opts := metav1.PatchOptions{FieldManager: FieldManager, Force: new(true)}
	if obj.GetNamespace() != "" {
		_, err = res.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	} else {
		_, err = res.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	}
	if err != nil {
		return fmt.Errorf("apply %s: %w", describe(obj), err)
	}
	return nil
}
