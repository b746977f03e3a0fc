package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// profiler captures CPU profiles of kube-apiserver (the cluster must run
// with localcluster.Options.Profiling) and of every manager (their loopback
// pprof endpoints): where the CPU goes during a burst is what decides a
// CPU-bound ratio.
type profiler struct {
	e      *Env
	window time.Duration
	dir    string
}

// start begins a profile of the next window in every process and returns a
// wait function giving the files written, by process (empty when off).
func (p profiler) start(ctx context.Context, name string) (wait func() (map[string]string, error)) {
	if p.window <= 0 {
		return func() (map[string]string, error) { return nil, nil }
	}
	seconds := strconv.Itoa(int(p.window.Seconds()))
	fetch := map[string]func() ([]byte, error){
		"apiserver": func() ([]byte, error) {
			return p.e.Kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
				Param("seconds", seconds).Timeout(p.window + time.Minute).DoRaw(ctx)
		},
	}
	for comp, m := range p.e.Managers {
		url := "http://" + m.PprofAddr + "/debug/pprof/profile?seconds=" + seconds
		fetch[comp] = func() ([]byte, error) { return httpGet(ctx, url, p.window+time.Minute) }
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		files = map[string]string{}
		errs  []error
	)
	for proc, get := range fetch {
		wg.Go(func() {
			path, err := p.write(name+"."+proc, get)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s profile %s: %w", proc, name, err))
				return
			}
			files[proc] = path
		})
	}
	return func() (map[string]string, error) {
		wg.Wait()
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return files, errors.Join(errs...)
	}
}

func (p profiler) write(name string, get func() ([]byte, error)) (string, error) {
	data, err := get()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(p.dir, name+".pprof")
	return path, os.WriteFile(path, data, 0o644)
}

func httpGet(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// measure runs one burst and records the CPU seconds every process spent in
// it and, when profiling is on, the CPU profiles of its start.
func (p profiler) measure(ctx context.Context, name string, burst func() (Throughput, error)) (Throughput, error) {
	var t Throughput
	var err error
	t.CPUSeconds, t.Profiles, err = p.around(ctx, name, func() (err error) {
		t, err = burst()
		return err
	})
	return t, err
}

// measureHops is measure for a hop run.
func (p profiler) measureHops(ctx context.Context, name string, run func() (Hops, error)) (Hops, error) {
	var h Hops
	var err error
	h.CPUSeconds, h.Profiles, err = p.around(ctx, name, func() (err error) {
		h, err = run()
		return err
	})
	return h, err
}

// around runs f and returns the CPU seconds of every process during it and
// the profiles of its first window.
func (p profiler) around(ctx context.Context, name string, f func() error) (map[string]float64, map[string]string, error) {
	cpu := cpuSnapshot(p.e)
	profile := p.start(ctx, name)
	if err := f(); err != nil {
		return nil, nil, err
	}
	used := diff(cpuSnapshot(p.e), cpu)
	files, err := profile()
	return used, files, err
}
