package testkit

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics are tested one way: our own through their collectors with
// prometheus/testutil (ToFloat64, CollectAndCompare); the libraries'
// (controller-runtime's reconcile counts, client-go's requests), which have
// no exported collector, through ByLabel; histograms through Histogram.

// ByLabel sums the counter and gauge series of family name in the process's
// controller-runtime registry by the value of one label.
func ByLabel(t testing.TB, name, label string) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			value := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					value = l.GetValue()
				}
			}
			out[value] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}

// Sum sums the counter and gauge series of family name in the process's
// controller-runtime registry that carry every label of match.
func Sum(t testing.TB, name string, match map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, match) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, match map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(match)
}

// Histogram returns the current state of h.
func Histogram(t testing.TB, h prometheus.Histogram) *dto.Histogram {
	t.Helper()
	m := &dto.Metric{}
	require.NoError(t, h.Write(m))
	return m.GetHistogram()
}
