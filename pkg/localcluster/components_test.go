package localcluster

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testLayout() layout {
	return layout{Dir: "/c", Ports: ports{EtcdClient: 1001, EtcdPeer: 1002, APIServer: 1003, ControllerManager: 1004, Scheduler: 1005, Kwok: 1006}}
}

// flagValues turns ["--a=b", ...] into {"--a": "b"}, failing on a repeated flag.
func flagValues(t *testing.T, args []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		_, dup := out[k]
		require.False(t, dup, "flag %s given twice", k)
		out[k] = v
	}
	return out
}

func TestComponentArgs(t *testing.T) {
	l := testLayout()
	tests := []struct {
		name string
		args []string
		want map[string]string
	}{
		{"etcd", l.etcdArgs(), map[string]string{
			"--data-dir":           "/c/etcd",
			"--listen-client-urls": "http://127.0.0.1:1001",
			"--listen-peer-urls":   "http://127.0.0.1:1002",
			"--initial-cluster":    "default=http://127.0.0.1:1002",
		}},
		{"kube-apiserver", l.apiServerArgs(false), map[string]string{
			"--profiling":                        "false",
			"--etcd-servers":                     "http://127.0.0.1:1001",
			"--bind-address":                     "127.0.0.1",
			"--advertise-address":                "127.0.0.1",
			"--endpoint-reconciler-type":         "none",
			"--secure-port":                      "1003",
			"--client-ca-file":                   "/c/pki/ca.crt",
			"--service-account-signing-key-file": "/c/pki/sa.key",
			"--service-account-key-file":         "/c/pki/sa.pub",
			"--service-cluster-ip-range":         "10.96.0.0/16",
			"--authorization-mode":               "Node,RBAC",
		}},
		{"kube-apiserver profiled", l.apiServerArgs(true), map[string]string{"--profiling": "true"}},
		{"kube-controller-manager", l.controllerManagerArgs(), map[string]string{
			"--kubeconfig":                       "/c/kubeconfig/kube-controller-manager.kubeconfig",
			"--bind-address":                     "127.0.0.1",
			"--secure-port":                      "1004",
			"--controllers":                      "*",
			"--use-service-account-credentials":  "true",
			"--service-account-private-key-file": "/c/pki/sa.key",
			"--root-ca-file":                     "/c/pki/ca.crt",
			"--cluster-signing-cert-file":        "/c/pki/ca.crt",
			"--cluster-signing-key-file":         "/c/pki/ca.key",
		}},
		{"kube-scheduler", l.schedulerArgs(), map[string]string{
			"--kubeconfig":   "/c/kubeconfig/kube-scheduler.kubeconfig",
			"--bind-address": "127.0.0.1",
			"--secure-port":  "1005",
			"--leader-elect": "false",
		}},
		{"kwok", l.kwokArgs("/c/kwok/stages.yaml"), map[string]string{
			"--kubeconfig":                  "/c/kubeconfig/kwok.kubeconfig",
			"--config":                      "/c/kwok/stages.yaml",
			"--manage-all-nodes":            "true",
			"--node-lease-duration-seconds": "40",
			"--node-ip":                     "127.0.0.1",
			"--cidr":                        "10.244.0.1/24",
			"--server-address":              "127.0.0.1:1006",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := flagValues(t, tt.args)
			for k, v := range tt.want {
				assert.Equal(t, v, got[k], k)
			}
			for k, v := range got {
				if strings.Contains(k, "address") || strings.Contains(k, "url") {
					assert.Contains(t, v, "127.0.0.1", "%s must bind to loopback", k)
				}
			}
		})
	}
}

func TestNewLayoutPortsDistinctAndFree(t *testing.T) {
	l, err := newLayout("/c")
	require.NoError(t, err)
	p := l.Ports
	seen := map[int]bool{}
	for _, port := range []int{p.EtcdClient, p.EtcdPeer, p.APIServer, p.ControllerManager, p.Scheduler, p.Kwok} {
		assert.False(t, seen[port], "port %d handed out twice", port)
		seen[port] = true
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		require.NoError(t, err, "port %d must be free", port)
		require.NoError(t, ln.Close())
	}
}
