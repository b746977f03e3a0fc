package manager

import (
	"runtime"
	"runtime/debug"
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

// BuildInfo is 1, labelled with what the binary is: which manager, its
// version and revision, and the Go that built it.
var BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "opsnorth_build_info",
	Help: "Always 1, by manager, version, revision (VCS commit) and goversion of the running binary.",
}, []string{"manager", "version", "revision", "goversion"})

// registerBuildInfo adds BuildInfo to controller-runtime's registry, once per process.
var registerBuildInfo = MetricsRegistrar(BuildInfo)

// reportBuildInfo sets BuildInfo for the manager named name.
func reportBuildInfo(name string) {
	registerBuildInfo()
	BuildInfo.WithLabelValues(name, version, revision(), runtime.Version()).Set(1)
}

// revision is the VCS commit the binary was built from, "unknown" when the
// build recorded none.
func revision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
