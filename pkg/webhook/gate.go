package webhook

import "sync"

// gate caps the attempts in flight to one receiver host. An item whose host
// is at the cap is parked instead of polled; when a slot of the host frees,
// the oldest parked item gets it and goes back to the queue.
type gate struct {
	limit int

	mu      sync.Mutex
	busy    map[string]int
	parked  map[string][]item
	waiting map[item]bool // parked items, so a duplicate is parked once
	granted map[item]bool // parked items handed a slot on release
}

func newGate(limit int) *gate {
	return &gate{
		limit: limit, busy: map[string]int{}, parked: map[string][]item{},
		waiting: map[item]bool{}, granted: map[item]bool{},
	}
}

// acquire takes a slot of it's host and reports true, or parks it and
// reports false. A parked item that was already granted a slot takes it.
func (g *gate) acquire(it item) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.granted[it] {
		delete(g.granted, it)
		return true
	}
	if g.waiting[it] {
		return false
	}
	if g.busy[it.host] < g.limit {
		g.busy[it.host]++
		return true
	}
	g.waiting[it] = true
	g.parked[it.host] = append(g.parked[it.host], it)
	return false
}

// release frees a slot of host. When an item of host is parked, the slot
// passes to it and release returns it for the caller to queue again.
func (g *gate) release(host string) (item, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q := g.parked[host]; len(q) > 0 {
		next := q[0]
		if len(q) == 1 {
			delete(g.parked, host)
		} else {
			g.parked[host] = q[1:]
		}
		delete(g.waiting, next)
		g.granted[next] = true
		return next, true
	}
	if g.busy[host]--; g.busy[host] <= 0 {
		delete(g.busy, host)
	}
	return item{}, false
}

// inFlight is the number of slots of host in use.
func (g *gate) inFlight(host string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.busy[host]
}

// parkedCount is the number of items waiting for a slot.
func (g *gate) parkedCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}
