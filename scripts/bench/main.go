// Command bench measures the scheduler's managers on the local cluster, each
// figure side by side with a baseline in the same run, prints a table and
// keeps the raw results as JSON (see README.md).
//
//	go run ./scripts/bench [--tasks 200] [--hop-workflows 20,100] [--write-workflows 50] [--deployments 20] [--scenarios throughput,hop,writes,deployments,memory,economy]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"opsnorth.io/scheduler/pkg/bench"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// options are the command's flags.
type options struct {
	bench.Config
	Out  string
	Keep bool
}

func main() {
	var o options
	var scenarios, managerArgs, hopSizes string
	var workflows int
	flag.IntVar(&o.Tasks, "tasks", 1000, "AgentTasks (and baseline Jobs) per throughput burst")
	flag.StringVar(&hopSizes, "hop-workflows", "20,100", "comma list of hop scenario sizes: workflows of 5 steps per burst, each size run --repeats times")
	flag.IntVar(&workflows, "workflows", 0, "one hop scenario size (kept for old command lines: --workflows=N is --hop-workflows=N)")
	flag.IntVar(&o.WriteWorkflows, "write-workflows", 50, "one-step Workflows in the writes scenario")
	flag.IntVar(&o.Deployments, "deployments", 200, "UserDeployments in the deployments scenario")
	flag.IntVar(&o.Repeats, "repeats", 3, "repetitions of the throughput and hop scenarios; the order of managed and baseline alternates")
	flag.BoolVar(&o.Floor, "floor", true, "add to every throughput repetition the floor burst: the same AgentTasks with the harness as the least controller (one Job create and one status write each)")
	flag.IntVar(&o.Workers, "workers", 32, "concurrent creates of the load generator (the same for managed and baseline)")
	flag.IntVar(&o.MemoryTasks, "memory-tasks", 0, "extra AgentTasks created before memory is read (the issue's 10k: --memory-tasks=10000)")
	flag.IntVar(&o.MemoryDeployments, "memory-deployments", 0, "extra UserDeployments created (to Ready) before memory is read (the issue's 1k: --memory-deployments=1000)")
	flag.StringVar(&scenarios, "scenarios", strings.Join(bench.Scenarios, ","), "comma list of scenarios: "+strings.Join(bench.Scenarios, ", "))
	flag.DurationVar(&o.PodDelay, "pod-delay", time.Second, "how long each Job pod runs on the kwok node")
	flag.DurationVar(&o.Settle, "settle", 15*time.Second, "how long a restarted manager runs before its writes are counted")
	flag.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "bound of each burst's wait for completion")
	flag.StringVar(&managerArgs, "manager-args", "", "space-separated flags added to every manager (e.g. '--max-concurrent-reconciles=20 --kube-api-qps=100')")
	flag.StringVar(&o.Out, "out", "", "JSON result path (default _output/bench/<timestamp>.json in the repository)")
	flag.BoolVar(&o.Keep, "keep", false, "keep the cluster's state directory (logs) on exit")
	flag.DurationVar(&o.Profile, "profile", 0, "capture CPU profiles of kube-apiserver and every manager, this long from the start of every throughput burst and hop run (e.g. 20s), next to --out")
	flag.DurationVar(&o.Profile, "profile-apiserver", 0, "the old name of --profile")
	flag.Parse()
	if workflows > 0 {
		hopSizes = strconv.Itoa(workflows)
	}
	var err error
	if o.HopWorkflows, err = parseSizes(hopSizes); err != nil {
		fmt.Fprintf(os.Stderr, "bench: --hop-workflows: %v\n", err)
		os.Exit(2)
	}
	o.Scenarios = strings.Split(scenarios, ",")
	o.ManagerArgs = strings.Fields(managerArgs)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// run starts a local cluster with the managers, runs the scenarios, writes
// the JSON and the table, and stops everything it started.
func run(ctx context.Context, o options, out io.Writer) (rep *bench.Report, err error) {
	for _, s := range o.Scenarios {
		if !slices.Contains(bench.Scenarios, s) {
			return nil, fmt.Errorf("unknown scenario %q (have %s)", s, strings.Join(bench.Scenarios, ", "))
		}
	}
	if o.Tasks < 1 || o.WriteWorkflows < 1 || o.Deployments < 1 || o.Repeats < 1 || o.Workers < 1 {
		return nil, errors.New("--tasks, --write-workflows, --deployments, --repeats and --workers must be at least 1")
	}
	if len(o.HopWorkflows) == 0 || slices.Min(o.HopWorkflows) < 1 {
		return nil, errors.New("--hop-workflows must list sizes of at least 1")
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	if o.Out == "" {
		o.Out = filepath.Join(root, "_output", "bench", time.Now().UTC().Format("20060102T150405Z")+".json")
	}
	o.ProfileDir = strings.TrimSuffix(o.Out, filepath.Ext(o.Out))
	started := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{PodDelay: o.PodDelay, Keep: o.Keep, Profiling: o.Profile > 0,
		AuditPolicy: bench.AuditPolicy()})
	if err != nil {
		return nil, fmt.Errorf("start local cluster: %w", err)
	}
	defer func() {
		if err != nil {
			c.KeepOnStop()
			say(out, "bench: failed; the cluster's state stays in %s (logs in %s)\n", c.Dir, c.LogDir())
		}
		if stopErr := c.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stop local cluster: %w", stopErr)
		}
	}()
	e, err := bench.NewEnv(ctx, c, o.ManagerArgs)
	if err != nil {
		return nil, err
	}
	say(out, "bench: cluster and managers ready in %s; running %s\n", time.Since(started).Round(time.Millisecond), strings.Join(o.Scenarios, ", "))
	rep, err = bench.Run(ctx, e, o.Config)
	if writeErr := writeJSON(o.Out, rep); writeErr != nil {
		return rep, errors.Join(err, writeErr)
	}
	if err != nil {
		return rep, err
	}
	if err := bench.PrintTable(out, rep); err != nil {
		return rep, err
	}
	say(out, "bench: raw results in %s\n", o.Out)
	return rep, nil
}

// parseSizes parses a comma list of positive sizes, e.g. "20,100".
func parseSizes(list string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("size %q: %w", f, err)
		}
		if n < 1 {
			return nil, fmt.Errorf("size %d: must be at least 1", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no size given")
	}
	return out, nil
}

func writeJSON(path string, rep *bench.Report) error {
	if rep == nil {
		return nil
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// say writes progress to out; a failed write to the terminal is not worth stopping a run for.
func say(out io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(out, format, args...)
}
