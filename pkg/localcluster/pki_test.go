package localcluster

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

func TestPKI(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	p, err := newPKI(dir, kubernetesServiceIP, now)
	require.NoError(t, err)

	roots := x509.NewCertPool()
	roots.AddCert(parseCert(t, p.CA.CertPEM))

	t.Run("apiserver serving certificate", func(t *testing.T) {
		cert := parseCert(t, p.APIServer.CertPEM)
		for _, name := range []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
			_, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			assert.NoError(t, err, name)
		}
		for _, ip := range []string{"127.0.0.1", "10.96.0.1"} {
			_, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: ip, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			assert.NoError(t, err, ip)
		}
		_, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "example.com"})
		assert.Error(t, err, "a name not in the SANs must not verify")
	})

	tests := []struct {
		name   string
		pair   *keyPair
		cn     string
		groups []string
	}{
		{"admin", p.Admin, "opsnorth-admin", []string{"system:masters"}},
		{"controller manager", p.ControllerManager, "system:kube-controller-manager", nil},
		{"scheduler", p.Scheduler, "system:kube-scheduler", nil},
		{"kwok", p.Kwok, "kwok-controller", []string{"system:masters"}},
		{"kubelet client", p.KubeletClient, "kube-apiserver-kubelet-client", []string{"system:masters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert := parseCert(t, tt.pair.CertPEM)
			assert.Equal(t, tt.cn, cert.Subject.CommonName)
			assert.Equal(t, tt.groups, cert.Subject.Organization)
			_, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			require.NoError(t, err)
			assert.True(t, cert.NotAfter.After(now.Add(24*time.Hour)))
		})
	}

	t.Run("files", func(t *testing.T) {
		for _, f := range []string{"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt", "kube-controller-manager.key", "sa.key", "sa.pub"} {
			st, err := os.Stat(p.path(f))
			require.NoError(t, err, f)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
		}
		pub, err := os.ReadFile(p.ServiceAccountPub)
		require.NoError(t, err)
		block, _ := pem.Decode(pub)
		require.NotNil(t, block)
		_, err = x509.ParsePKIXPublicKey(block.Bytes)
		require.NoError(t, err)
	})
}

func TestAPIServerSpecNamesServiceIP(t *testing.T) {
	spec := apiServerSpec(net.IPv4(10, 96, 0, 1))
	assert.True(t, spec.Server)
	assert.False(t, spec.Client)
	assert.Len(t, spec.IPs, 2)
	assert.True(t, spec.IPs[1].Equal(net.ParseIP("10.96.0.1")))
}
