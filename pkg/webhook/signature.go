package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (https://www.standardwebhooks.com) headers of a
// delivery, spelled as the spec spells them (HTTP header names are case
// insensitive; Go sends them canonicalised, e.g. Webhook-Id).
const (
	// HeaderWebhookID is the delivery's id: its idempotency key, the same on
	// every attempt (and the same value as Idempotency-Key).
	HeaderWebhookID = "webhook-id"
	// HeaderWebhookTimestamp is the unix time, in seconds, of this attempt.
	HeaderWebhookTimestamp = "webhook-timestamp"
	// HeaderWebhookSignature is the space-delimited list of signatures of
	// this attempt; we send one, "v1,<base64>", when a secret is configured.
	HeaderWebhookSignature = "webhook-signature"
)

// SecretPrefix marks a secret in the Standard Webhooks serialisation: the
// base64 (standard alphabet, padded) of the HMAC key follows it.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, either way, for Verify (and the Standard Webhooks
// reference libraries) to accept it.
const DefaultTolerance = 5 * time.Minute

// signatureVersion prefixes a symmetric (HMAC-SHA256) signature.
const signatureVersion = "v1"

// Errors of ParseSecret and Verify. None of them, nor their wrappings,
// carries a secret or a key.
var (
	ErrInvalidSecret       = errors.New("invalid webhook secret")
	ErrMissingHeaders      = errors.New("missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrInvalidTimestamp    = errors.New("invalid webhook-timestamp header")
	ErrTimestampTooOld     = errors.New("webhook timestamp too old")
	ErrTimestampTooNew     = errors.New("webhook timestamp too new")
	ErrNoMatchingSignature = errors.New("no matching webhook signature")
)

// secretError is ParseSecret's error: what is wrong with the value, never
// the value.
type secretError struct{ reason string }

func (e *secretError) Error() string { return ErrInvalidSecret.Error() + ": " + e.reason }

// Unwrap makes errors.Is(err, ErrInvalidSecret) hold.
func (e *secretError) Unwrap() error { return ErrInvalidSecret }

// ParseSecret returns the HMAC key of a secret value: the base64 decoding of
// what follows "whsec_" when the value starts with it (as the Standard
// Webhooks spec and its libraries serialise secrets), else the value's own
// bytes, so secrets from before Standard Webhooks keep their key. The errors
// wrap ErrInvalidSecret and never include the value.
func ParseSecret(value []byte) ([]byte, error) {
	encoded, ok := bytes.CutPrefix(value, []byte(SecretPrefix))
	if !ok {
		if len(value) == 0 {
			return nil, &secretError{reason: "empty"}
		}
		return value, nil
	}
	key := make([]byte, base64.StdEncoding.DecodedLen(len(encoded)))
	n, err := base64.StdEncoding.Decode(key, encoded)
	if err != nil {
		return nil, &secretError{reason: "not valid base64 after " + SecretPrefix}
	}
	if n == 0 {
		return nil, &secretError{reason: "empty after " + SecretPrefix}
	}
	return key[:n], nil
}

// Sign returns the webhook-signature value of one attempt: "v1," and the
// base64 of HMAC-SHA256(key, id + "." + unix seconds of ts + "." + body).
// id must not contain "." (our ids are "<uid>/completion").
func Sign(key []byte, id string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts.Unix(), 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return signatureVersion + "," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify checks a delivery as a receiver does: secret is the value of the
// signing Secret's key (raw, or "whsec_" and base64), header and body are
// the request's, now is the receiver's clock. It returns nil when the
// timestamp is within tolerance of now, either way (tolerance <= 0 means
// DefaultTolerance), and one of the space-delimited signatures of the
// webhook-signature header is the v1 signature of id, timestamp and body,
// compared in constant time; other versions (v1a...) are skipped.
func Verify(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := ParseSecret([]byte(secret))
	if err != nil {
		return err
	}
	id, stamp, signatures := header.Get(HeaderWebhookID), header.Get(HeaderWebhookTimestamp), header.Get(HeaderWebhookSignature)
	if id == "" || stamp == "" || signatures == "" {
		return ErrMissingHeaders
	}
	unix, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return ErrInvalidTimestamp
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts := time.Unix(unix, 0)
	switch {
	case now.Sub(ts) > tolerance:
		return ErrTimestampTooOld
	case ts.Sub(now) > tolerance:
		return ErrTimestampTooNew
	}
	want := []byte(Sign(key, id, ts, body))
	for _, got := range strings.Fields(signatures) {
		if hmac.Equal([]byte(got), want) {
			return nil
		}
	}
	return ErrNoMatchingSignature
}
