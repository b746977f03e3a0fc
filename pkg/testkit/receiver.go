// Package testkit holds what the managers' tests share: a webhook receiver
// on loopback with scripted answers, and a black hole that never answers.
package testkit

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Got is one request a Receiver got, and when.
type Got struct {
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time
}

// Handler answers the n-th request (from 0) of a Receiver.
type Handler func(n int, w http.ResponseWriter, r *http.Request)

// Receiver is a webhook receiver on loopback that records what it gets.
type Receiver struct {
	URL    string
	handle Handler

	mu   sync.Mutex
	got  []Got
	upAt time.Time
	// addr and srv serve a receiver that starts down (NewReceiverDown).
	addr string
	srv  *http.Server
}

// NewReceiver serves handle on a fresh loopback port until the test ends.
func NewReceiver(t *testing.T, handle Handler) *Receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return NewReceiverOn(t, ln, handle)
}

// NewReceiverOn serves handle on ln until the test ends.
func NewReceiverOn(t *testing.T, ln net.Listener, handle Handler) *Receiver {
	r := &Receiver{handle: handle}
	srv := httptest.NewUnstartedServer(r)
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// NewReceiverDown reserves a loopback port for a receiver that is down
// until Up: senders get connection refused, as from a receiver that is
// really down. It stops when the test ends.
func NewReceiverDown(t *testing.T, handle Handler) *Receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	r := &Receiver{handle: handle, addr: ln.Addr().String()}
	r.URL = "http://" + r.addr
	if err := ln.Close(); err != nil {
		t.Fatalf("release the receiver's port: %v", err)
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

// Up starts serving a receiver made by NewReceiverDown on its port. It may
// run on a goroutine of its own: it reports failure with Errorf.
func (r *Receiver) Up(t *testing.T) {
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

// UpAt is when Up last ran; zero for a receiver that was never down.
func (r *Receiver) UpAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.upAt
}

// ServeHTTP records the request, then lets the handler answer.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	n := len(r.got)
	r.got = append(r.got, Got{Path: req.URL.Path, Header: req.Header.Clone(), Body: body, At: time.Now()})
	r.mu.Unlock()
	r.handle(n, w, req)
}

// Requests returns what the receiver got so far.
func (r *Receiver) Requests() []Got {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Got(nil), r.got...)
}

// OK answers 200 with no body to every request.
func OK(int, http.ResponseWriter, *http.Request) {}

// FailFirst answers the first n requests with status, then 200.
func FailFirst(n, status int) Handler {
	return func(i int, w http.ResponseWriter, _ *http.Request) {
		if i < n {
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

// HangFirst holds the first n requests for d (or until the sender gives up),
// then answers 200.
func HangFirst(n int, d time.Duration) Handler {
	return func(i int, w http.ResponseWriter, r *http.Request) {
		if i < n {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

// Redirect answers every request with a 302 to path.
func Redirect(path string) Handler {
	return func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, path, http.StatusFound)
	}
}

// BlackHole accepts connections on a loopback port and never answers; it
// returns the receiver's URL. Connections close when the test ends.
func BlackHole(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/hook"
}
