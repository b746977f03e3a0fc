package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Header names of a delivery besides the Standard Webhooks ones
// (HeaderWebhookID, HeaderWebhookTimestamp, HeaderWebhookSignature).
const (
	// HeaderIdempotencyKey carries the same value as webhook-id.
	HeaderIdempotencyKey = "Idempotency-Key"
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
	// IdempotencyKey is identical on every attempt of the same delivery; it
	// is sent as webhook-id and Idempotency-Key. It must not contain ".".
	IdempotencyKey string
	// Timestamp is when this attempt is made, sent as webhook-timestamp and
	// signed: a captured attempt cannot be replayed past the receiver's
	// tolerance. The Service sets it from its clock.
	Timestamp time.Time
	// Event names the payload kind, e.g. "agenttask.completed".
	Event string
	// Key is the HMAC key (ParseSecret of the Secret's value); when not
	// empty the attempt carries a webhook-signature.
	Key []byte
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
	if req.Timestamp.IsZero() {
		return Result{Err: errors.New("build request: no attempt timestamp")}
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("build request: %w", err)}
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("User-Agent", s.userAgent)
	httpReq.Header.Set(HeaderIdempotencyKey, req.IdempotencyKey)
	httpReq.Header.Set(HeaderWebhookID, req.IdempotencyKey)
	httpReq.Header.Set(HeaderWebhookTimestamp, strconv.FormatInt(req.Timestamp.Unix(), 10))
	if req.Event != "" {
		httpReq.Header.Set(HeaderEvent, req.Event)
	}
	if len(req.Key) > 0 {
		httpReq.Header.Set(HeaderWebhookSignature, Sign(req.Key, req.IdempotencyKey, req.Timestamp, req.Body))
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
