package localcluster

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
)

// Network ranges of a local cluster. Nothing routes them: kwok hands out pod
// IPs from PodCIDR and Services get virtual IPs from ServiceCIDR.
const (
	ServiceCIDR = "10.96.0.0/16"
	ClusterCIDR = "10.244.0.0/16"
	// KwokPodCIDR is what the kwok node hands out pod IPs from.
	KwokPodCIDR = "10.244.0.1/24"
	host        = "127.0.0.1"
)

// kubernetesServiceIP is the first address of ServiceCIDR: the ClusterIP of
// the default/kubernetes Service, which the apiserver certificate must name.
var kubernetesServiceIP = net.IPv4(10, 96, 0, 1)

// ports are the loopback ports a local cluster listens on.
type ports struct {
	EtcdClient, EtcdPeer int
	APIServer            int
	ControllerManager    int
	Scheduler            int
	Kwok                 int
}

// layout is where a cluster keeps its files and which ports it uses; the
// command lines of every component derive from it alone.
type layout struct {
	Dir   string
	Ports ports
}

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.Dir}, elem...)...)
}

func (l layout) pkiPath(name string) string { return l.path("pki", name) }

func (l layout) kubeconfig(name string) string { return l.path("kubeconfig", name+".kubeconfig") }

func url(scheme string, port int) string {
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// APIServerURL is the https URL of kube-apiserver.
func (l layout) APIServerURL() string { return url("https", l.Ports.APIServer) }

// EtcdURL is the client URL of etcd.
func (l layout) EtcdURL() string { return url("http", l.Ports.EtcdClient) }

func (l layout) etcdArgs() []string {
	peer := url("http", l.Ports.EtcdPeer)
	return []string{
		"--name=default",
		"--data-dir=" + l.path("etcd"),
		"--listen-client-urls=" + l.EtcdURL(),
		"--advertise-client-urls=" + l.EtcdURL(),
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--initial-cluster-state=new",
		// A throwaway cluster: durability buys nothing and fsync costs seconds under load.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

// AdmissionPlugins are enabled beside kube-apiserver's defaults, on the local
// cluster and the integration tests' control plane alike.
const AdmissionPlugins = "OwnerReferencesPermissionEnforcement"

func (l layout) apiServerArgs(profiling bool) []string {
	return []string{
		"--etcd-servers=" + l.EtcdURL(),
		"--bind-address=" + host,
		"--advertise-address=" + host,
		// The loopback advertise address is refused unless nothing reconciles
		// the kubernetes Endpoints to it.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(l.Ports.APIServer),
		"--cert-dir=" + l.path("apiserver"),
		"--tls-cert-file=" + l.pkiPath("apiserver.crt"),
		"--tls-private-key-file=" + l.pkiPath("apiserver.key"),
		"--client-ca-file=" + l.pkiPath("ca.crt"),
		"--kubelet-client-certificate=" + l.pkiPath("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + l.pkiPath("apiserver-kubelet-client.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.pkiPath("sa.pub"),
		"--service-account-signing-key-file=" + l.pkiPath("sa.key"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		// As on OpenShift: setting blockOwnerDeletion needs update on the
		// owner's finalizers, so a missing RBAC rule fails here too.
		"--enable-admission-plugins=" + AdmissionPlugins,
		"--allow-privileged=true",
		"--profiling=" + strconv.FormatBool(profiling),
	}
}

// controlLoopArgs are the flags kube-controller-manager and kube-scheduler share:
// serve /healthz on a loopback port, authenticate with their own kubeconfig.
func (l layout) controlLoopArgs(name string, port int) []string {
	kc := l.kubeconfig(name)
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=" + host,
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + l.path(name),
		"--leader-elect=false",
		"--profiling=false",
	}
}

func (l layout) controllerManagerArgs() []string {
	return append(l.controlLoopArgs("kube-controller-manager", l.Ports.ControllerManager),
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+l.pkiPath("sa.key"),
		"--root-ca-file="+l.pkiPath("ca.crt"),
		"--cluster-signing-cert-file="+l.pkiPath("ca.crt"),
		"--cluster-signing-key-file="+l.pkiPath("ca.key"),
		"--service-cluster-ip-range="+ServiceCIDR,
		"--cluster-cidr="+ClusterCIDR,
		"--allocate-node-cidrs=false",
		// The default 20 QPS leaves Deployment and Job status lagging by
		// seconds under bursts of hundreds of objects, which the drills and
		// benchmarks would then measure instead of the managers.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--concurrent-deployment-syncs=20",
		"--concurrent-job-syncs=20",
		// kwok renews the fake node's heartbeat from the same 2 cores that a
		// burst saturates; with the default 50s grace the node-lifecycle
		// controller declared the node NotReady mid-burst and marked every
		// pod NotReady, so ready UserDeployments fell back to provisioning.
		"--node-monitor-grace-period=5m",
	)
}

func (l layout) schedulerArgs() []string {
	return l.controlLoopArgs("kube-scheduler", l.Ports.Scheduler)
}

func (l layout) kwokArgs(stagesPath string) []string {
	return []string{
		"--kubeconfig=" + l.kubeconfig("kwok"),
		"--config=" + stagesPath,
		"--manage-all-nodes=true",
		"--node-ip=" + host,
		"--cidr=" + KwokPodCIDR,
		"--server-address=" + net.JoinHostPort(host, strconv.Itoa(l.Ports.Kwok)),
		// The node's heartbeat is its Lease, as a kubelet's: the heartbeat
		// stage refreshes the node's conditions only every ~10 minutes, and
		// kwok renews no Lease unless given a duration (the default is 0).
		// Without it the node went NotReady 5 minutes into every run (the
		// controller manager's grace period), which marked every pod
		// NotReady and stalled a 200-app bench at 184 Ready.
		"--node-lease-duration-seconds=40",
	}
}

// freePorts asks the kernel for n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range listeners {
			_ = ln.Close()
		}
	}()
	out := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func newLayout(dir string) (layout, error) {
	p, err := freePorts(6)
	if err != nil {
		return layout{}, err
	}
	return layout{Dir: dir, Ports: ports{
		EtcdClient: p[0], EtcdPeer: p[1], APIServer: p[2],
		ControllerManager: p[3], Scheduler: p[4], Kwok: p[5],
	}}, nil
}
