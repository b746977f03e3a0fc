package bench

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// stamps records, per object and stage, the local time a watch first showed
// the object in that stage.
type stamps struct {
	mu sync.Mutex
	m  map[string]map[string]time.Time
	n  map[string]int
}

func newStamps() *stamps {
	return &stamps{m: map[string]map[string]time.Time{}, n: map[string]int{}}
}

// mark records at as key's time of stage unless one is recorded already,
// and tells whether it did.
func (s *stamps) mark(key, stage string, at time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	byStage, ok := s.m[key]
	if !ok {
		byStage = map[string]time.Time{}
		s.m[key] = byStage
	}
	if _, seen := byStage[stage]; seen {
		return false
	}
	byStage[stage] = at
	s.n[stage]++
	return true
}

func (s *stamps) get(key, stage string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[key][stage]
	return t, ok
}

func (s *stamps) count(stage string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[stage]
}

// between returns, for every key in keys with both stages, to - from.
func (s *stamps) between(keys []string, from, to string) []time.Duration {
	var out []time.Duration
	for _, k := range keys {
		a, okA := s.get(k, from)
		b, okB := s.get(k, to)
		if okA && okB {
			out = append(out, b.Sub(a))
		}
	}
	return out
}

// latest returns the latest time of stage among keys.
func (s *stamps) latest(keys []string, stage string) time.Time {
	var last time.Time
	for _, k := range keys {
		if t, ok := s.get(k, stage); ok && t.After(last) {
			last = t
		}
	}
	return last
}

// Follow feeds every event of the watches open returns to fn with its local
// receive time, reopening a watch the server closes, until ctx ends (which
// also ends the open watch's request); watch errors are skipped. It returns
// once the first watch is open, so nothing created afterwards is missed.
func Follow(ctx context.Context, open func(context.Context) (watch.Interface, error), fn func(watch.Event, time.Time)) error {
	w, err := open(ctx)
	if err != nil {
		return err
	}
	go func() {
		for {
			for ev := range w.ResultChan() {
				if ev.Type != watch.Error {
					fn(ev, time.Now())
				}
			}
			w.Stop()
			for {
				if ctx.Err() != nil {
					return
				}
				if w, err = open(ctx); err == nil {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	return nil
}
