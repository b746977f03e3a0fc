package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Header names of a delivery.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderSignature      = "X-Opsnorth-Signature"
	HeaderEvent          = "X-Opsnorth-Event"
)

// ErrAddressRefused is returned (wrapped) when the SSRF guard refuses the
// receiver's address.
var ErrAddressRefused = errors.New("webhook address refused")

// Request is one delivery attempt.
type Request struct {
	// URL of the receiver.
	URL string
	// Body is the JSON payload; identical on every attempt.
	Body []byte
	// IdempotencyKey is identical on every attempt of the same delivery.
	IdempotencyKey string
	// Event names the payload kind, e.g. "agenttask.completed".
	Event string
	// Secret signs the body when not empty.
	Secret []byte
}

// Result is the outcome of one attempt.
type Result struct {
	// StatusCode is the receiver's HTTP status; 0 when it did not answer.
	StatusCode int
	// Err explains a failed attempt (no answer, or a non-2xx status).
	Err error
}

// Delivered reports whether the receiver accepted the delivery.
func (r Result) Delivered() bool { return r.Err == nil && r.StatusCode/100 == 2 }

// Sender posts webhooks through an HTTP client that enforces the guard, the
// per-attempt timeout and no redirects.
type Sender struct {
	client    *http.Client
	userAgent string
}

// NewSender returns a Sender. timeout bounds each attempt, dial to last byte.
func NewSender(guard Guard, timeout time.Duration, userAgent string) *Sender {
	dialer := &net.Dialer{Timeout: timeout, Control: guard.control}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial on our behalf, past the guard
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &Sender{
		client: &http.Client{
			Transport: transport,
			Timeout:   timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		userAgent: userAgent,
	}
}

// Send makes one attempt. The response body is read and discarded (never
// stored) so the connection can be reused.
func (s *Sender) Send(ctx context.Context, req Request) Result {
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("build request: %w", err)}
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("User-Agent", s.userAgent)
	httpReq.Header.Set(HeaderIdempotencyKey, req.IdempotencyKey)
	if req.Event != "" {
		httpReq.Header.Set(HeaderEvent, req.Event)
	}
	if len(req.Secret) > 0 {
		httpReq.Header.Set(HeaderSignature, Sign(req.Secret, req.Body))
	}
	resp, err := s.client.Do(httpReq)
	if refused := refusal(err); refused != nil {
		return Result{Err: refused}
	}
	if err != nil {
		return Result{Err: fmt.Errorf("post webhook: %w", err)}
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return Result{StatusCode: resp.StatusCode, Err: fmt.Errorf("receiver answered %d", resp.StatusCode)}
	}
	return Result{StatusCode: resp.StatusCode}
}

// Sign returns the X-Opsnorth-Signature value of body: "sha256=" followed by
// the hex HMAC-SHA256 of the body under secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether signature is body's valid signature under secret,
// in constant time. Receivers (and tests) use it.
func Verify(secret, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}
