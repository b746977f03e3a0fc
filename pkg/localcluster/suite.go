package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// ManagerNamespace is where the managers' ServiceAccounts and leases live,
// as in the kustomize packaging.
const ManagerNamespace = "opsnorth-system"

// Components are the scheduler's manager binaries.
var Components = []string{"deployments", "tasks", "workflows"}

// rbacKinds are the objects of the rendered packaging the local suite
// installs: identities, permissions, the policies that guard tenants (kwok
// has no CNI, so a NetworkPolicy is stored but not enforced) and the
// ConfigMaps they read as params. The
// managers themselves run as local processes, not as the packaged
// Deployments (kwok would only fake those).
var rbacKinds = []string{"Namespace", "ConfigMap", "ResourceQuota", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
	"NetworkPolicy", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
	"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}

// InstallRBAC renders the all-in-one kustomize overlay exactly as users
// install it and applies its namespaces, ServiceAccounts, roles and bindings.
// It records each manager Deployment's literal env (workers, client QPS...)
// so StartManager runs the managers as packaged.
func (c *Cluster) InstallRBAC(ctx context.Context, root string) (int, error) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).
		Run(filesys.MakeFsOnDisk(), filepath.Join(root, "kustomize", "overlays", "all-in-one"))
	if err != nil {
		return 0, fmt.Errorf("render kustomize/overlays/all-in-one: %w", err)
	}
	var out []byte
	env, files := map[string][]string{}, map[string]map[string]string{}
	configMaps := map[string]map[string]string{}
	for _, res := range resMap.Resources() {
		if res.GetKind() == "ConfigMap" {
			configMaps[res.GetName()] = res.GetDataMap()
		}
	}
	for _, res := range resMap.Resources() {
		if res.GetKind() == "Deployment" {
			comp := res.GetLabels()["app.kubernetes.io/component"]
			d, err := renderedDeployment(res)
			if err != nil {
				return 0, err
			}
			env[comp] = deploymentLiteralEnv(d)
			if files[comp], err = mountedFiles(d, func(name string) (map[string]string, error) {
				if data, ok := configMaps[name]; ok {
					return data, nil
				}
				return nil, fmt.Errorf("not in the overlay")
			}); err != nil {
				return 0, err
			}
		}
		if !slices.Contains(rbacKinds, res.GetKind()) {
			continue
		}
		doc, err := res.AsYAML()
		if err != nil {
			return 0, fmt.Errorf("render %s %s: %w", res.GetKind(), res.GetName(), err)
		}
		out = append(append(out, "---\n"...), doc...)
	}
	path := c.layout.path("suite-rbac.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	c.mu.Lock()
	c.managerEnv, c.managerFiles = env, files
	c.mu.Unlock()
	return c.Apply(ctx, path)
}

// renderedDeployment reads a rendered Deployment.
func renderedDeployment(res *resource.Resource) (*appsv1.Deployment, error) {
	doc, err := res.AsYAML()
	if err != nil {
		return nil, fmt.Errorf("render Deployment %s: %w", res.GetName(), err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read Deployment %s: %w", res.GetName(), err)
	}
	return &d, nil
}

// deploymentLiteralEnv returns NAME=value for every literal env entry of the
// Deployment's container "manager".
func deploymentLiteralEnv(d *appsv1.Deployment) []string {
	var out []string
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				out = append(out, e.Name+"="+e.Value)
			}
		}
	}
	return out
}

// PackagedManager is how a packaging (a kustomize overlay, a Helm chart) runs
// a manager, as far as a local process can copy it: the ServiceAccount its
// pods authenticate as (its leader-election lease lives in that namespace)
// and the literal env of its container "manager".
type PackagedManager struct {
	Namespace      string
	ServiceAccount string
	Env            []string
	// Files are the ConfigMap files its container mounts, by path there
	// (e.g. the tasks manager's pod defaults).
	Files map[string]string
}

// PackagedManagerOf reads how an installed manager Deployment runs its
// manager (see PackagedManager).
func PackagedManagerOf(d *appsv1.Deployment) PackagedManager {
	sa := d.Spec.Template.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	return PackagedManager{Namespace: d.Namespace, ServiceAccount: sa, Env: deploymentLiteralEnv(d)}
}

// BuildManagers builds the three manager binaries from the repository at root
// into dir and returns their paths by component.
func BuildManagers(ctx context.Context, root, dir string) (map[string]string, error) {
	bins := make(map[string]string, len(Components))
	for _, comp := range Components {
		out := filepath.Join(dir, comp)
		// The flags of `make build` and the control plane's build
		// (CGO_ENABLED=0, -trimpath): their compiled packages are reused.
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./cmd/"+comp)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if output, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/%s: %w: %s", comp, err, output)
		}
		bins[comp] = out
	}
	return bins, nil
}

// Manager is a manager process of the local suite.
type Manager struct {
	Component   string
	MetricsAddr string
	HealthAddr  string
	// PprofAddr serves net/http/pprof, on loopback only.
	PprofAddr string
	Process   *Process
}

// DefaultManagerArgs are the component flags the local suite runs with:
// tasks and workflows in every served namespace, webhooks allowed to
// loopback receivers.
func DefaultManagerArgs(component string) []string {
	switch component {
	case "deployments":
		return []string{"--deployment-domain=apps.localtest.me"}
	case "tasks", "workflows":
		return []string{"--webhook-allowed-cidrs=127.0.0.0/8"}
	}
	return nil
}

// StartManager runs a manager binary authenticated as its own ServiceAccount
// (opsnorth-system/opsnorth-scheduler-<component>), so it has exactly the
// permissions the packaging grants, and waits until it reports ready. name
// tells replicas apart ("tasks-1"); args are added to the defaults. The
// process gets the packaged Deployment's literal env (see InstallRBAC); flags
// win over env.
func (c *Cluster) StartManager(ctx context.Context, name, component, bin string, args ...string) (*Manager, error) {
	c.mu.Lock()
	env, files := c.managerEnv[component], c.managerFiles[component]
	c.mu.Unlock()
	return c.StartPackagedManager(ctx, name, component, bin,
		PackagedManager{Namespace: ManagerNamespace, ServiceAccount: "opsnorth-scheduler-" + component, Env: env, Files: files}, args...)
}

// StartPackagedManager runs a manager binary as a packaging installed it
// (PackagedManagerOf its Deployment): authenticated as p's ServiceAccount,
// with its leader-election lease in p's namespace and p's env, and waits
// until it reports ready. name tells replicas apart; args are added to
// DefaultManagerArgs; flags win over env.
func (c *Cluster) StartPackagedManager(ctx context.Context, name, component, bin string, p PackagedManager, args ...string) (*Manager, error) {
	kubeconfig, err := c.KubeconfigForServiceAccount(p.Namespace, p.ServiceAccount)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	m := &Manager{
		Component:   component,
		MetricsAddr: "127.0.0.1:" + strconv.Itoa(ports[0]),
		HealthAddr:  "127.0.0.1:" + strconv.Itoa(ports[1]),
		PprofAddr:   "127.0.0.1:" + strconv.Itoa(ports[2]),
	}
	all := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--leader-election-namespace=" + p.Namespace,
		"--metrics-bind-address=" + m.MetricsAddr,
		"--health-probe-bind-address=" + m.HealthAddr,
		"--pprof-bind-address=" + m.PprofAddr,
		"--zap-devel",
	}, DefaultManagerArgs(component)...)
	env, err := localFiles(c.layout.path(filepath.Join("files", name)), p.Files, p.Env)
	if err != nil {
		return nil, err
	}
	if m.Process, err = c.StartProcess(name, bin, append(all, args...), env); err != nil {
		return nil, err
	}
	if err := m.waitReady(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	return m, nil
}

// waitReady polls the manager's /readyz until it answers 200, and fails at
// once when the process exits.
func (m *Manager) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if m.Process.Exited() {
			return fmt.Errorf("%s %s: %s", m.Process.Name, m.Process.State(), m.Process.tail(4096))
		}
		if httpOK(ctx, "http://"+m.HealthAddr+"/readyz") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	return fmt.Errorf("%s not ready within %s; see %s", m.Process.Name, timeout, m.Process.LogPath)
}

func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
