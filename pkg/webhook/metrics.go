package webhook

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"opsnorth.io/scheduler/pkg/manager"
)

// The delivery metrics, the same for every kind (label kind: AgentTask, Workflow).
var (
	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_webhook_deliveries_total",
		Help: "Completion webhook attempts by kind and result: delivered, failed (no 2xx answer), " +
			"refused (SSRF guard, not sent) or secret (signing key unusable, not sent).",
	}, []string{"kind", "result"})
	attemptDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "opsnorth_webhook_attempt_duration_seconds",
		Help:    "Time of one completion webhook request, dial to last byte, by kind.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"kind"})
	inFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "opsnorth_webhook_requests_in_flight",
		Help: "Completion webhook requests under way, by kind.",
	}, []string{"kind"})
	gaveUp = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_webhook_gave_up_total",
		Help: "Completion webhooks abandoned after their last attempt failed, by kind.",
	}, []string{"kind"})
	parked = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "opsnorth_webhook_deliveries_parked",
		Help: "Due completion webhooks waiting because their receiver host has --webhook-max-per-host requests under way, by kind.",
	}, []string{"kind"})
)

// registerMetrics adds the metrics to controller-runtime's registry, once per process.
var registerMetrics = manager.MetricsRegistrar(deliveries, attemptDuration, gaveUp, inFlight, parked)

// resultLabel is an attempt's result label.
func resultLabel(res Result) string {
	switch {
	case res.Delivered():
		return "delivered"
	case errors.Is(res.Err, ErrAddressRefused):
		return "refused"
	case errors.Is(res.Err, ErrSecret):
		return "secret"
	}
	return "failed"
}

// Deliveries returns the counter of attempts of kind with result, for tests.
func Deliveries(kind, result string) prometheus.Counter {
	return deliveries.WithLabelValues(kind, result)
}

// GaveUp returns the counter of deliveries of kind abandoned, for tests.
func GaveUp(kind string) prometheus.Counter {
	return gaveUp.WithLabelValues(kind)
}
