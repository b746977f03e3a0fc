// Command localcluster runs the embedded local cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, a kwok node and a volume
// provisioner, all on 127.0.0.1), installs the CRDs, RBAC, the managers and
// the samples, saying how long each step took, prints how to reach it, and on
// Ctrl-C or SIGTERM stops everything it started and exits 0 (a process killed
// after ignoring SIGTERM is reported, not failed).
//
//	go run ./scripts/localcluster [--dir DIR] [--keep] [--pod-delay 1s]
//
// `make run` builds and execs it instead: go run exits 1 after a Ctrl-C
// whatever the command returns.
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
	"opsnorth.io/scheduler/pkg/localcluster/provisioner"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.Dir, "dir", "", "state directory (PKI, kubeconfigs, etcd data, logs); must be empty or missing; default a new temporary directory")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the state directory on exit (logs, kubeconfigs)")
	flag.DurationVar(&cfg.PodDelay, "pod-delay", 0, "how long a pod that exits (a Job's, or one naming an exit code) runs on the kwok node unless its kwok.opsnorth.io/delay says otherwise (default 1s)")
	flag.Parse()

	restore := takeTerminal()
	defer restore()
	// The first Ctrl-C or SIGTERM ends ctx; the handler stays installed until
	// main returns, so a second one cannot kill the command halfway through
	// stopping the cluster (which would leave processes and files behind).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		restore()
		os.Exit(1) //nolint:gocritic // restore ran; the deferred calls have nothing left to do
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
	say(out, "starting the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, volume provisioner)...\n")
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: cfg.Dir, Keep: cfg.Keep, PodDelay: cfg.PodDelay})
	if err != nil {
		return interrupted(ctx, out, "starting the cluster", fmt.Errorf("start cluster: %w", err))
	}
	defer func() {
		if stopErr := stopCluster(cluster, out); stopErr != nil && err == nil {
			err = fmt.Errorf("stop cluster: %w", stopErr)
		}
	}()
	say(out, "cluster up in %s (node %s Ready)\n", since(started), localcluster.NodeName)

	s := &setup{root: root}
	for _, step := range s.steps() {
		stepStarted := time.Now()
		say(out, "%s...\n", step.name)
		if err := step.run(ctx, cluster, out); err != nil {
			return interrupted(ctx, out, step.name, fmt.Errorf("%s: %w", step.name, err))
		}
		say(out, "%s: done in %s\n", step.name, since(stepStarted))
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

// interrupted returns err, or nil when ctx ended: a step cut short by Ctrl-C
// is what the person asked for, not a failure.
func interrupted(ctx context.Context, out io.Writer, doing string, err error) error {
	if ctx.Err() == nil {
		return err
	}
	say(out, "interrupted while %s\n", doing)
	return nil
}

// stopCluster stops everything the command started. A process that ignored
// SIGTERM for its grace period (kube-apiserver draining slowly, say) is
// killed and reported, but is no failure: it is gone all the same.
func stopCluster(cluster *localcluster.Cluster, out io.Writer) error {
	started := time.Now()
	say(out, "stopping the local cluster (Ctrl-C again is ignored, so that nothing is left behind)...\n")
	err := cluster.Stop()
	if localcluster.OnlyKilled(err) {
		say(out, "warning: %v\n", err)
		err = nil
	}
	if err == nil {
		say(out, "stopped in %s\n", since(started))
	}
	return err
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

func printUsage(out io.Writer, cluster *localcluster.Cluster, keep bool) {
	kubectl := cluster.Binary("kubectl")
	say(out, `
The local cluster is running. In another shell:

  export KUBECONFIG=%s
  alias kubectl=%s

  kubectl get nodes                 # %s, a kwok node: pods run there without containers
  kubectl get crd                   # scheduler.opsnorth.io and third-party CRDs
  kubectl get opsnorth -A           # every kind of the suite (ud, udt, at, onwf, agt)
  kubectl create job hello --image=any -- true && kubectl wait --for=condition=Complete job/hello

A Job pod's run time, exit code and termination message come from its annotations
(kwok.opsnorth.io/delay, kwok.opsnorth.io/exit-code, kwok.opsnorth.io/termination-message);
images on unreachable.invalid fail to pull, invalid image names fail as InvalidImageName,
other pods naming an exit code (or ending in a shell "exit N") crash-loop; claims bind on the default StorageClass %s
(see scripts/kwok-stages/README.md).

Logs: %s
Press Ctrl-C to stop everything%s.
`, cluster.AdminKubeconfig, kubectl, localcluster.NodeName, provisioner.DefaultClassName, cluster.LogDir(), keepNote(keep, cluster.Dir))
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
