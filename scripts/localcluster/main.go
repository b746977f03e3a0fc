// Command localcluster runs the embedded local cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and a kwok node, all on 127.0.0.1),
// installs the scheduler CRDs and the third-party CRDs, prints how to reach
// it, and on Ctrl-C or SIGTERM stops everything it started.
//
//	go run ./scripts/localcluster [--dir DIR] [--keep] [--pod-delay 1s]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"opsnorth.io/scheduler/pkg/localcluster"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.Dir, "dir", "", "state directory (PKI, kubeconfigs, etcd data, logs); must be empty or missing; default a new temporary directory")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the state directory on exit (logs, kubeconfigs)")
	flag.DurationVar(&cfg.PodDelay, "pod-delay", 0, "how long a Job's pod runs on the kwok node unless its kwok.opsnorth.io/delay says otherwise (default 1s)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		os.Exit(1)
	}
}

// config is the command's flags.
type config struct {
	Dir      string
	Keep     bool
	PodDelay time.Duration
}

// run starts the cluster, sets it up, and keeps it running until ctx ends or
// one of its processes dies; it always stops what it started.
func run(ctx context.Context, cfg config, out io.Writer) (err error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return err
	}
	started := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: cfg.Dir, Keep: cfg.Keep, PodDelay: cfg.PodDelay})
	if err != nil {
		return fmt.Errorf("start cluster: %w", err)
	}
	defer func() {
		say(out, "stopping the local cluster...\n")
		if stopErr := cluster.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stop cluster: %w", stopErr)
		}
	}()
	say(out, "cluster up in %s (node %s Ready)\n", time.Since(started).Round(time.Millisecond), localcluster.NodeName)

	for _, step := range setupSteps(root) {
		if err := step.run(ctx, cluster, out); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	printUsage(out, cluster, cfg.Keep)
	return supervise(ctx, cluster, out)
}

// supervise blocks until ctx ends (nil), the command's parent exits (nil: a
// `go run` or `make` killed without passing the signal on must not leave the
// cluster behind), or a supervised process exits (error).
func supervise(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error {
	parent := os.Getppid()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if os.Getppid() != parent {
				say(out, "parent process %d exited\n", parent)
				return nil
			}
			if p := cluster.Exited(); p != nil {
				return fmt.Errorf("%s %s unexpectedly; see %s", p.Name, p.State(), p.LogPath)
			}
		}
	}
}

func printUsage(out io.Writer, cluster *localcluster.Cluster, keep bool) {
	kubectl := cluster.Binary("kubectl")
	say(out, `
The local cluster is running. In another shell:

  export KUBECONFIG=%s
  alias kubectl=%s

  kubectl get nodes                 # %s, a kwok node: pods run there without containers
  kubectl get crd                   # scheduler.opsnorth.io and third-party CRDs
  kubectl get ud,at,wf -A           # UserDeployments, AgentTasks, Workflows
  kubectl create job hello --image=any -- true && kubectl wait --for=condition=Complete job/hello

A Job pod's run time, exit code and termination message come from its annotations
(kwok.opsnorth.io/delay, kwok.opsnorth.io/exit-code, kwok.opsnorth.io/termination-message;
see scripts/kwok-stages/README.md).

Logs: %s
Press Ctrl-C to stop everything%s.
`, cluster.AdminKubeconfig, kubectl, localcluster.NodeName, cluster.LogDir(), keepNote(keep, cluster.Dir))
}

func keepNote(keep bool, dir string) string {
	if keep {
		return " (the state in " + dir + " stays)"
	}
	return " and remove " + dir
}

// say writes progress for the person at the terminal; a failed write to the
// terminal is nothing the command could act on.
func say(out io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(out, format, args...)
}
