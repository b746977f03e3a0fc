package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is how long every certificate of a local cluster is valid: a
// local cluster lives for minutes or hours, never a year.
const certValidity = 7 * 24 * time.Hour

// keyPair is a certificate with its private key, PEM-encoded.
type keyPair struct {
	CertPEM []byte
	KeyPEM  []byte

	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// certSpec describes a leaf certificate issued by the cluster CA.
type certSpec struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Server       bool
	Client       bool
}

// newCA creates a self-signed CA that signs every other certificate and
// signs kubelet-client and cluster-signing certificates in the controller manager.
func newCA(now time.Time) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "opsnorth-localcluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return sign(tmpl, key, tmpl, key)
}

// issue signs a leaf certificate described by spec with the CA.
func (ca *keyPair) issue(spec certSpec, now time.Time) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key for %s: %w", spec.CommonName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organization},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
	}
	if spec.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	return sign(tmpl, key, ca.cert, ca.key)
}

func sign(tmpl *x509.Certificate, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*keyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  keyPEM,
		cert:    cert,
		key:     key,
	}, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// serial returns a random 127-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		// crypto/rand.Reader never fails on Linux; a zero serial is still a valid certificate.
		return big.NewInt(1)
	}
	return n
}

// write stores the pair as <dir>/<name>.crt and <dir>/<name>.key.
func (kp *keyPair) write(dir, name string) (certPath, keyPath string, err error) {
	certPath = filepath.Join(dir, name+".crt")
	keyPath = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, kp.CertPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write %s: %w", certPath, err)
	}
	if err := os.WriteFile(keyPath, kp.KeyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write %s: %w", keyPath, err)
	}
	return certPath, keyPath, nil
}

// pki is every key and certificate of a local cluster, written under one directory.
type pki struct {
	Dir string

	CA, APIServer, KubeletClient *keyPair
	Admin, ControllerManager     *keyPair
	Scheduler, Kwok              *keyPair

	// ServiceAccountKey and ServiceAccountPub sign and verify ServiceAccount tokens.
	ServiceAccountKey, ServiceAccountPub string
}

// path returns the path of <name>.crt or <name>.key in the PKI directory.
func (p *pki) path(file string) string { return filepath.Join(p.Dir, file) }

// clientSpecs are the client identities of a local cluster: the admin is a
// member of system:masters; the controller manager and the scheduler use
// the names their built-in ClusterRoleBindings grant; kwok, which plays every
// kubelet, is an admin as kwokctl makes it.
func clientSpecs() map[string]certSpec {
	return map[string]certSpec{
		"admin":                    {CommonName: "opsnorth-admin", Organization: []string{"system:masters"}, Client: true},
		"kube-controller-manager":  {CommonName: "system:kube-controller-manager", Client: true},
		"kube-scheduler":           {CommonName: "system:kube-scheduler", Client: true},
		"kwok":                     {CommonName: "kwok-controller", Organization: []string{"system:masters"}, Client: true},
		"apiserver-kubelet-client": {CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}, Client: true},
	}
}

// apiServerSpec is the serving certificate of kube-apiserver: reachable as
// 127.0.0.1 from the host and as the kubernetes Service from pods.
func apiServerSpec(serviceIP net.IP) certSpec {
	return certSpec{
		CommonName: "kube-apiserver",
		DNSNames: []string{
			"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local",
		},
		IPs:    []net.IP{net.IPv4(127, 0, 0, 1), serviceIP},
		Server: true,
	}
}

// newPKI generates and writes the cluster's CA, serving and client
// certificates and the ServiceAccount signing key into dir.
func newPKI(dir string, serviceIP net.IP, now time.Time) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create pki dir: %w", err)
	}
	ca, err := newCA(now)
	if err != nil {
		return nil, err
	}
	p := &pki{Dir: dir, CA: ca}
	if _, _, err := ca.write(dir, "ca"); err != nil {
		return nil, err
	}
	if p.APIServer, err = issueAndWrite(ca, dir, "apiserver", apiServerSpec(serviceIP), now); err != nil {
		return nil, err
	}
	targets := map[string]**keyPair{
		"admin":                    &p.Admin,
		"kube-controller-manager":  &p.ControllerManager,
		"kube-scheduler":           &p.Scheduler,
		"kwok":                     &p.Kwok,
		"apiserver-kubelet-client": &p.KubeletClient,
	}
	for name, spec := range clientSpecs() {
		if *targets[name], err = issueAndWrite(ca, dir, name, spec, now); err != nil {
			return nil, err
		}
	}
	if err := p.writeServiceAccountKey(); err != nil {
		return nil, err
	}
	return p, nil
}

func issueAndWrite(ca *keyPair, dir, name string, spec certSpec, now time.Time) (*keyPair, error) {
	kp, err := ca.issue(spec, now)
	if err != nil {
		return nil, err
	}
	if _, _, err := kp.write(dir, name); err != nil {
		return nil, err
	}
	return kp, nil
}

func (p *pki) writeServiceAccountKey() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	p.ServiceAccountKey = p.path("sa.key")
	p.ServiceAccountPub = p.path("sa.pub")
	if err := os.WriteFile(p.ServiceAccountKey, keyPEM, 0o600); err != nil {
		return fmt.Errorf("write service-account key: %w", err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	if err := os.WriteFile(p.ServiceAccountPub, pubPEM, 0o600); err != nil {
		return fmt.Errorf("write service-account public key: %w", err)
	}
	return nil
}
