package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// profiler captures kube-apiserver CPU profiles (the cluster must run with
// localcluster.Options.Profiling): where the API server's CPU goes during a
// burst is what decides a CPU-bound throughput ratio.
type profiler struct {
	e      *Env
	window time.Duration
	dir    string
}

// start begins a profile of the next window and returns a wait function
// giving the file written (empty when profiling is off).
func (p profiler) start(ctx context.Context, name string) (wait func() (string, error)) {
	if p.window <= 0 {
		return func() (string, error) { return "", nil }
	}
	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := p.e.Kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(p.window.Seconds()))).Timeout(p.window + time.Minute).DoRaw(ctx)
		if err != nil {
			done <- result{err: fmt.Errorf("kube-apiserver profile %s: %w", name, err)}
			return
		}
		path := filepath.Join(p.dir, name+".apiserver.pprof")
		if err := os.MkdirAll(p.dir, 0o755); err != nil {
			done <- result{err: err}
			return
		}
		done <- result{path: path, err: os.WriteFile(path, data, 0o644)}
	}()
	return func() (string, error) {
		r := <-done
		return r.path, r.err
	}
}

// measure runs one burst and records the CPU seconds every process spent in
// it and, when profiling is on, the kube-apiserver profile of its start.
func (p profiler) measure(ctx context.Context, name string, burst func() (Throughput, error)) (Throughput, error) {
	cpu := cpuSnapshot(p.e)
	profile := p.start(ctx, name)
	t, err := burst()
	if err != nil {
		return t, err
	}
	t.CPUSeconds = diff(cpuSnapshot(p.e), cpu)
	t.APIServerProfile, err = profile()
	return t, err
}
