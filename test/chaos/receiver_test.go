//go:build chaos

package chaos

import (
	"testing"
	"time"

	"opsnorth.io/scheduler/pkg/testkit"
)

// receiver is a testkit receiver that starts down (nothing listens on its
// port until up, so senders get connection refused as from a receiver that
// is really down) and counts deliveries per path (one per task or
// workflow) and per Idempotency-Key.
type receiver struct{ *testkit.Receiver }

// newReceiver reserves a loopback port for a receiver that is not up yet.
func newReceiver(t *testing.T) *receiver {
	t.Helper()
	return &receiver{testkit.NewReceiverDown(t, testkit.OK)}
}

// up starts listening on the reserved port. It may run in a goroutine of
// its own: it reports failure with Errorf.
func (r *receiver) up(t *testing.T) { r.Up(t) }

func (r *receiver) url(path string) string { return r.URL + path }

// deliveries summarises what arrived for paths.
type deliveries struct {
	Expected         int     `json:"expected"`
	Delivered        int     `json:"delivered"`
	Deliveries       int     `json:"deliveries"`
	DuplicateSameKey int     `json:"duplicatesSameKey"`
	DistinctKeysOver int     `json:"pathsWithMoreThanOneKey"`
	EmptyKey         int     `json:"withoutIdempotencyKey"`
	LastAfterUpSecs  float64 `json:"lastDeliveryAfterReceiverUpSeconds"`
}

func (r *receiver) count(paths []string) deliveries {
	byPath := map[string]map[string]int{} // path → idempotency key → deliveries
	var last time.Time
	for _, got := range r.Requests() {
		if byPath[got.Path] == nil {
			byPath[got.Path] = map[string]int{}
		}
		byPath[got.Path][got.Header.Get("Idempotency-Key")]++
		last = got.At
	}
	d := deliveries{Expected: len(paths)}
	for _, p := range paths {
		keys := byPath[p]
		if len(keys) > 0 {
			d.Delivered++
		}
		if len(keys) > 1 {
			d.DistinctKeysOver++
		}
		for k, n := range keys {
			d.Deliveries += n
			d.DuplicateSameKey += n - 1
			if k == "" {
				d.EmptyKey++
			}
		}
	}
	if upAt := r.UpAt(); !upAt.IsZero() && last.After(upAt) {
		d.LastAfterUpSecs = last.Sub(upAt).Seconds()
	}
	return d
}
