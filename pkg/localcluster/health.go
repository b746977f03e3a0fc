package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// pollInterval is how often health endpoints and objects are polled.
const pollInterval = 100 * time.Millisecond

// probe is one health endpoint: GET url must answer 200 with a body
// containing want.
type probe struct {
	URL    string
	Want   string
	Client *http.Client
}

// insecureClient probes the self-signed /healthz of kube-controller-manager
// and kube-scheduler, whose serving certificates they generate themselves.
func insecureClient() *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback probe of a self-signed endpoint
		},
	}
}

// adminClient probes kube-apiserver as the admin, verifying its certificate.
func adminClient(p *pki) (*http.Client, error) {
	cert, err := tls.X509KeyPair(p.Admin.CertPEM, p.Admin.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load admin certificate: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(p.CA.cert)
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12},
		},
	}, nil
}

// check does one probe.
func (pr probe) check(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pr.URL, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	resp, err := pr.Client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", pr.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("read %s: %w", pr.URL, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), pr.Want) {
		return fmt.Errorf("GET %s: %d %s", pr.URL, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// waitHealthy polls the probe until it passes, the process exits, or ctx ends.
func waitHealthy(ctx context.Context, p *Process, pr probe) error {
	var last error
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if last = pr.check(ctx); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s %s before it was healthy; log %s:\n%s", p.Name, p.State(), p.LogPath, p.tail(4096))
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy: %w (last: %w); log %s:\n%s", p.Name, ctx.Err(), last, p.LogPath, p.tail(4096))
		case <-tick.C:
		}
	}
}

// poll calls cond until it reports done, returns an error, or ctx ends.
func poll(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		done, err := cond(ctx)
		if err != nil {
			last = err
		} else if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", what, errors.Join(ctx.Err(), last))
		case <-tick.C:
		}
	}
}
