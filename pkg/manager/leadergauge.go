package manager

import (
	"context"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// LeaderGauges are gauges computed at scrape time from a cache, so they can
// never drift from the objects. They report only while their manager leads,
// and nothing while none does: every replica caches every object, so a
// standby reporting too would double the leader's numbers.
type LeaderGauges struct {
	descs   []*prometheus.Desc
	collect atomic.Pointer[func(chan<- prometheus.Metric)]
}

// NewLeaderGauges returns gauges of descs that report nothing until a
// Reporter of theirs starts.
func NewLeaderGauges(descs ...*prometheus.Desc) *LeaderGauges {
	return &LeaderGauges{descs: descs}
}

// Describe sends the gauges' descriptions.
func (g *LeaderGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range g.descs {
		ch <- d
	}
}

// Collect sends the leader's values, if a manager leads.
func (g *LeaderGauges) Collect(ch chan<- prometheus.Metric) {
	if f := g.collect.Load(); f != nil {
		(*f)(ch)
	}
}

// Reporter returns the runnable that, once its manager is elected (at once
// with leader election off), makes the gauges report through collect until
// the manager stops. Another manager elected since (tests run several in one
// process) keeps the gauges.
func (g *LeaderGauges) Reporter(collect func(chan<- prometheus.Metric)) manager.Runnable {
	return &leaderReporter{gauges: g, collect: &collect}
}

type leaderReporter struct {
	gauges  *LeaderGauges
	collect *func(chan<- prometheus.Metric)
}

// NeedLeaderElection reports true: only the leader reports.
func (r *leaderReporter) NeedLeaderElection() bool { return true }

func (r *leaderReporter) Start(ctx context.Context) error {
	r.gauges.collect.Store(r.collect)
	<-ctx.Done()
	r.gauges.collect.CompareAndSwap(r.collect, nil)
	return nil
}
