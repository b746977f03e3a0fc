package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountTokenTTL is how long a token minted for a ServiceAccount
// kubeconfig is valid.
const ServiceAccountTokenTTL int64 = 24 * 60 * 60

const contextName = "opsnorth-local"

// kubeconfigFor builds a kubeconfig for server, trusting caPEM, with the
// given user credentials.
func kubeconfigFor(server string, caPEM []byte, user string, auth *clientcmdapi.AuthInfo) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = auth
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: user}
	cfg.CurrentContext = contextName
	return cfg
}

func certAuth(kp *keyPair) *clientcmdapi.AuthInfo {
	return &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
}

func writeKubeconfig(path string, cfg *clientcmdapi.Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create kubeconfig dir: %w", err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// writeComponentKubeconfigs writes the certificate kubeconfigs of the admin,
// the controller manager, the scheduler and kwok.
func writeComponentKubeconfigs(l layout, p *pki) error {
	for name, kp := range map[string]*keyPair{
		"admin":                   p.Admin,
		"kube-controller-manager": p.ControllerManager,
		"kube-scheduler":          p.Scheduler,
		"kwok":                    p.Kwok,
	} {
		cfg := kubeconfigFor(l.APIServerURL(), p.CA.CertPEM, name, certAuth(kp))
		if err := writeKubeconfig(l.kubeconfig(name), cfg); err != nil {
			return err
		}
	}
	return nil
}

// KubeconfigForServiceAccount makes sure the namespace and the ServiceAccount
// exist, mints a token for it with the TokenRequest API (valid
// ServiceAccountTokenTTL seconds) and writes a kubeconfig authenticating as
// it. A program run with this kubeconfig has exactly the ServiceAccount's RBAC.
func (c *Cluster) KubeconfigForServiceAccount(namespace, name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := c.Clientset.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create serviceaccount %s/%s: %w", namespace, name, err)
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(ServiceAccountTokenTTL)}}
	tok, err := c.Clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request token for %s/%s: %w", namespace, name, err)
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	cfg := kubeconfigFor(c.layout.APIServerURL(), c.pki.CA.CertPEM, user, &clientcmdapi.AuthInfo{Token: tok.Status.Token})
	path := c.layout.kubeconfig("sa-" + namespace + "." + name)
	if err := writeKubeconfig(path, cfg); err != nil {
		return "", err
	}
	return path, nil
}
