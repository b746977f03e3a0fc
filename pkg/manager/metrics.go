package manager

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// MetricsRegistrar returns a function that adds collectors to
// controller-runtime's registry the first time it is called. Each package
// declares its collectors with one and calls it from its Setup: the registry
// is process-wide, and tests run several managers in one process.
func MetricsRegistrar(collectors ...prometheus.Collector) func() {
	var once sync.Once
	return func() { once.Do(func() { metrics.Registry.MustRegister(collectors...) }) }
}
