package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// restMetric is controller-runtime's count of the client's requests.
const restMetric = "rest_client_requests_total"

// RestCounts scrapes m's /metrics and returns its API requests by method.
func RestCounts(ctx context.Context, m *localcluster.Manager) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.MetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", m.Process.Name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseRestCounts(string(body))
}

// parseRestCounts sums rest_client_requests_total by method in a Prometheus
// text exposition; requests that did not succeed (a code other than 2xx) are
// kept apart as "<method> <code>", e.g. "PATCH 409".
func parseRestCounts(text string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, restMetric+"{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			return nil, fmt.Errorf("malformed sample %q", line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return nil, fmt.Errorf("sample %q: %w", line, err)
		}
		labels := line[len(restMetric)+1 : end]
		key := labelValue(labels, "method")
		if code := labelValue(labels, "code"); !strings.HasPrefix(code, "2") {
			key += " " + code
		}
		out[key] += v
	}
	return out, sc.Err()
}

func labelValue(labels, name string) string {
	for kv := range strings.SplitSeq(labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// writes is the number of mutating requests in counts (every method but
// GET), failed ones included.
func writes(counts map[string]float64) float64 {
	var n float64
	for key, v := range counts {
		if method, _, _ := strings.Cut(key, " "); method != http.MethodGet {
			n += v
		}
	}
	return n
}

// diff returns after - before by method, dropping zeros.
func diff(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Memory is a process's resident memory in MiB from /proc/<pid>/status.
type Memory struct {
	Process string  `json:"process"`
	PeakMiB float64 `json:"peakMiB"` // VmHWM
	RSSMiB  float64 `json:"rssMiB"`  // VmRSS
	// CPUSeconds is the CPU time the process spent since it started: the
	// price of a tighter GC (GOGC, GOMEMLIMIT) shows up here.
	CPUSeconds float64 `json:"cpuSeconds"`
}

// ReadMemory reads p's VmHWM and VmRSS.
func ReadMemory(p *localcluster.Process) (Memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		return Memory{}, err
	}
	m := Memory{Process: p.Name}
	for line := range strings.SplitSeq(string(data), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return Memory{}, fmt.Errorf("%s %s: %w", p.Name, key, err)
		}
		switch key {
		case "VmHWM":
			m.PeakMiB = kb / 1024
		case "VmRSS":
			m.RSSMiB = kb / 1024
		}
	}
	if m.CPUSeconds, err = ReadCPUSeconds(p); err != nil {
		return Memory{}, err
	}
	return m, nil
}

// ReadCPUSeconds reads p's user+system CPU time from /proc/<pid>/stat.
func ReadCPUSeconds(p *localcluster.Process) (float64, error) {
	return localcluster.CPUSeconds(p.PID())
}

// cpuSnapshot reads the CPU time of every running process of the cluster.
func cpuSnapshot(e *Env) map[string]float64 {
	out := map[string]float64{}
	for _, p := range e.Cluster.Processes() {
		if p.Exited() {
			continue
		}
		if v, err := ReadCPUSeconds(p); err == nil {
			out[p.Name] = v
		}
	}
	return out
}
