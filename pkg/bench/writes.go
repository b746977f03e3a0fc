package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// writesQuiet is how long the audit log must show no write on the run's
// objects before the writes scenario stops counting (at most Config.Settle).
const writesQuiet = 3 * time.Second

// WriteRun is the writes scenario: N one-step Workflows created at once →
// all Succeeded, and every mutating request each manager sent for them.
type WriteRun struct {
	Workflows   int     `json:"workflows"`
	WallSeconds float64 `json:"wallSeconds"`
	// Duration is create → workflow Succeeded per workflow.
	Duration Dist `json:"duration"`
	// Source is "audit" (kube-apiserver's audit log) or
	// "rest_client_requests_total" (the managers' metrics, by method only),
	// with the reason for the fallback in Fallback.
	Source   string `json:"source"`
	Fallback string `json:"fallback,omitempty"`
	// PerWorkflow is each manager's writes on the run's objects (the
	// workflows, their tasks, Jobs, pods and Events) per workflow.
	PerWorkflow map[string]float64 `json:"perWorkflow"`
	// Requests are those writes by manager, verb, resource and code.
	Requests []AuditCount `json:"requests,omitempty"`
	// Other are the managers' writes in the same window on other objects
	// (e.g. an earlier scenario's tasks settling); PerUnit is per workflow too.
	Other []AuditCount `json:"other,omitempty"`
	// Rest is each manager's rest_client_requests_total over the window,
	// other objects included: a cross-check of the audit totals.
	Rest []Writes `json:"rest"`
}

// WorkflowWrites creates n one-step Workflows at once, waits until all have
// Succeeded and the run's writes have stopped (writesQuiet, at most settle),
// and counts what each manager wrote.
func WorkflowWrites(ctx context.Context, e *Env, run string, n, workers int, settle, timeout time.Duration) (*WriteRun, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prefix := "bx-" + run + "-"
	names := objectNames(strings.TrimSuffix(prefix, "-"), n)
	mine := func(name string) bool { return strings.HasPrefix(name, prefix) }
	log := e.Cluster.AuditLog()
	var offset int64
	if log != "" {
		info, err := os.Stat(log)
		if err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		offset = info.Size()
	}
	before, err := restAll(ctx, e)
	if err != nil {
		return nil, err
	}
	st := newStamps()
	err = watchWorkflowEnds(ctx, e, run, st)
	if err != nil {
		return nil, err
	}
	_, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, name string) error {
		_, err := e.Sched.SchedulerV1alpha1().Workflows(TaskNamespace).Create(ctx, benchWorkflow(name, run, 1), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("writes workflows: %w", err)
	}
	r := &WriteRun{Workflows: n, WallSeconds: wall.Seconds(), Duration: Summarize(st.between(names, stageCreate, stageDone))}
	var evs []auditEvent
	if log != "" {
		if evs, err = untilQuiet(ctx, log, offset, mine, settle); err != nil {
			return nil, err
		}
	} else if err := sleep(ctx, settle); err != nil {
		return nil, err
	}
	after, err := restAll(ctx, e)
	if err != nil {
		return nil, err
	}
	for _, comp := range localcluster.Components {
		d := diff(after[comp], before[comp])
		r.Rest = append(r.Rest, Writes{Manager: comp, Methods: d, Writes: writes(d), PerUnit: ratio(writes(d), float64(n)), Unit: "workflow"})
	}
	if log == "" {
		r.Source, r.Fallback = "rest_client_requests_total", "the cluster runs without an audit log (localcluster.Options.AuditPolicy unset)"
		r.PerWorkflow = map[string]float64{}
		for _, w := range r.Rest {
			r.PerWorkflow[w.Manager] = w.PerUnit
		}
		return r, nil
	}
	users := map[string]string{}
	for _, comp := range localcluster.Components {
		users[managerUser(comp)] = comp
	}
	r.Source = "audit"
	r.Requests, r.Other = tallyAudit(evs, users, n, mine)
	r.PerWorkflow = perManager(r.Requests, n, localcluster.Components)
	return r, nil
}

// untilQuiet reads the audit log from offset until writesQuiet passes with
// no new event on an object mine matches, or settle passes, and returns
// everything read.
func untilQuiet(ctx context.Context, log string, offset int64, mine func(string) bool, settle time.Duration) ([]auditEvent, error) {
	var all []auditEvent
	start, last := time.Now(), time.Now()
	for {
		evs, next, err := readAudit(log, offset)
		if err != nil {
			return nil, err
		}
		offset = next
		for _, ev := range evs {
			if ev.ObjectRef != nil && mine(ev.ObjectRef.Name) {
				last = time.Now()
			}
		}
		all = append(all, evs...)
		if time.Since(last) >= writesQuiet || time.Since(start) >= settle {
			return all, nil
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// restAll scrapes every current manager's request counts.
func restAll(ctx context.Context, e *Env) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	for _, comp := range localcluster.Components {
		counts, err := RestCounts(ctx, e.Managers[comp])
		if err != nil {
			return nil, err
		}
		out[comp] = counts
	}
	return out, nil
}
