package webhook

import (
	"errors"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// Policy bounds the retries of a delivery.
type Policy struct {
	// MaxAttempts is the most requests sent for one delivery.
	MaxAttempts int32
	// BaseDelay is the wait after the first failed attempt; it doubles after
	// each further failure, up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the wait between attempts.
	MaxDelay time.Duration
}

// DefaultPolicy makes 8 attempts over about 10 minutes.
var DefaultPolicy = Policy{MaxAttempts: 8, BaseDelay: 5 * time.Second, MaxDelay: 5 * time.Minute}

// Pending reports whether a delivery recorded in st still has work to do.
func Pending(st *v1alpha1.WebhookDelivery) bool {
	return st == nil || (!st.Delivered && !st.GaveUp)
}

// Next returns how long to wait before the next attempt may be sent; zero
// means now. It must only be called while Pending(st).
//
// The wait counts from the end of the second of the last attempt: status
// stores lastAttemptTime with whole-second precision, so the attempt happened
// somewhere in that second, and counting from its start could cut a backoff
// short by up to a second. A retry may come up to a second late, never early.
func (p Policy) Next(st *v1alpha1.WebhookDelivery, now time.Time) time.Duration {
	if st == nil || st.Attempts == 0 || st.LastAttemptTime == nil {
		return 0
	}
	last := st.LastAttemptTime.Truncate(time.Second).Add(time.Second)
	delay := p.BaseDelay
	for i := int32(1); i < st.Attempts && delay < p.MaxDelay; i++ {
		delay *= 2
	}
	delay = min(delay, p.MaxDelay)
	if wait := last.Add(delay).Sub(now); wait > 0 {
		return wait
	}
	return 0
}

// Record returns st updated with the outcome of one attempt made at now.
// The delivery gives up once MaxAttempts attempts failed, and at once when
// the SSRF guard refused the receiver's address: no retry changes that.
func (p Policy) Record(st *v1alpha1.WebhookDelivery, res Result, now time.Time) *v1alpha1.WebhookDelivery {
	out := &v1alpha1.WebhookDelivery{}
	if st != nil {
		out = st.DeepCopy()
	}
	out.Attempts++
	t := metav1.NewTime(now)
	out.LastAttemptTime = &t
	out.LastStatusCode = int32(min(max(res.StatusCode, 0), 999))
	out.LastError = ""
	if res.Delivered() {
		out.Delivered = true
		return out
	}
	if res.Err != nil {
		out.LastError = truncate(res.Err.Error(), 1024)
	}
	if out.Attempts >= p.MaxAttempts || errors.Is(res.Err, ErrAddressRefused) {
		out.GaveUp = true
	}
	return out
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
