//go:build chaos

package chaos

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// receiver is a webhook endpoint on 127.0.0.1 that counts deliveries per
// path (one per task or workflow) and per Idempotency-Key. It can start
// down: nothing listens on its port until up is called, so senders get
// connection refused as from a receiver that is really down.
type receiver struct {
	addr string
	srv  *http.Server

	mu     sync.Mutex
	byPath map[string]map[string]int // path → idempotency key → deliveries
	upAt   time.Time
	last   time.Time
}

// newReceiver reserves a loopback port for a receiver that is not up yet.
func newReceiver(t *testing.T) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &receiver{addr: ln.Addr().String(), byPath: map[string]map[string]int{}}
	require.NoError(t, ln.Close())
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

// up starts listening on the reserved port. It may run in a goroutine of
// its own: it reports failure with Errorf.
func (r *receiver) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Errorf("listen again on the receiver's port: %v", err)
		return
	}
	r.mu.Lock()
	r.upAt = time.Now()
	r.mu.Unlock()
	go func() { _ = r.srv.Serve(ln) }()
}

func (r *receiver) url(path string) string { return "http://" + r.addr + path }

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	key := req.Header.Get("Idempotency-Key")
	r.mu.Lock()
	if r.byPath[req.URL.Path] == nil {
		r.byPath[req.URL.Path] = map[string]int{}
	}
	r.byPath[req.URL.Path][key]++
	r.last = time.Now()
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

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
	r.mu.Lock()
	defer r.mu.Unlock()
	d := deliveries{Expected: len(paths)}
	for _, p := range paths {
		keys := r.byPath[p]
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
	if !r.upAt.IsZero() && r.last.After(r.upAt) {
		d.LastAfterUpSecs = r.last.Sub(r.upAt).Seconds()
	}
	return d
}
