package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	ac "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/testenv"
)

// BenchmarkStatusWrite measures what an AgentTask's three status writes
// (Pending, Running, Succeeded) cost the API server, as server-side apply and
// as JSON merge patch, on the same envtest kube-apiserver. apiserver-ms/op is
// the kube-apiserver process's CPU time per task (three writes), read from
// /proc; run with -benchtime=300x.
func BenchmarkStatusWrite(b *testing.B) {
	env := testenv.Require(b)
	cs, err := versioned.NewForConfig(env.Config)
	require.NoError(b, err)
	c, err := client.New(env.Config, client.Options{})
	require.NoError(b, err)
	pid, err := apiserverPID(env.Config.Host)
	require.NoError(b, err)
	for i, write := range []struct {
		name  string
		write func(context.Context, versioned.Interface, *v1alpha1.AgentTask, v1alpha1.AgentTaskStatus) (*v1alpha1.AgentTask, error)
	}{
		{"apply", applyStatus},
		{"merge", mergeStatus},
	} {
		b.Run(write.name, func(b *testing.B) {
			ns := fmt.Sprintf("bench-status-%d-%d", i, time.Now().UnixNano()%1e6)
			require.NoError(b, c.Create(b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
			tasks := make([]*v1alpha1.AgentTask, b.N)
			for n := range tasks {
				t := &v1alpha1.AgentTask{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%d", n), Namespace: ns},
					Spec:       v1alpha1.AgentTaskSpec{TaskID: "id", UserID: "u", Image: "ghcr.io/acme/agent:1.2", Input: map[string]string{"PROMPT": "hi"}},
				}
				tasks[n], err = cs.SchedulerV1alpha1().AgentTasks(ns).Create(b.Context(), t, metav1.CreateOptions{})
				require.NoError(b, err)
			}
			cpu0, err := localcluster.CPUSeconds(pid)
			require.NoError(b, err)
			b.ResetTimer()
			work := make(chan *v1alpha1.AgentTask)
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for t := range work {
						for _, st := range lifecycle(t.Name) {
							var err error
							if t, err = write.write(b.Context(), cs, t, st); err != nil {
								b.Error(err)
								return
							}
						}
					}
				})
			}
			for _, t := range tasks {
				work <- t
			}
			close(work)
			wg.Wait()
			b.StopTimer()
			cpu1, err := localcluster.CPUSeconds(pid)
			require.NoError(b, err)
			b.ReportMetric((cpu1-cpu0)*1000/float64(b.N), "apiserver-ms/op")
		})
	}
}

// lifecycle is a task's three status writes, shaped as the manager writes them.
func lifecycle(name string) []v1alpha1.AgentTaskStatus {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: "the task is " + reason, LastTransitionTime: now, ObservedGeneration: 1}
	}
	pending := v1alpha1.AgentTaskStatus{
		Phase: v1alpha1.TaskPending, JobName: name, ObservedGeneration: 1, Reason: "JobCreated", Message: "waiting for the pod",
		Conditions: []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, "Pending"), cond(v1alpha1.ConditionReconciling, metav1.ConditionTrue, "Pending")},
	}
	running := *pending.DeepCopy()
	running.Phase, running.PodName, running.StartTime, running.Reason, running.Message = v1alpha1.TaskRunning, name+"-x7k2p", &now, "PodRunning", "the agent runs"
	running.Conditions[0].Reason, running.Conditions[1].Reason = "Running", "Running"
	done := *running.DeepCopy()
	done.Phase, done.CompletionTime, done.ExitCode, done.Reason, done.Message = v1alpha1.TaskSucceeded, &now, ptr.To[int32](0), "Completed", "the agent exited with code 0"
	done.Output = map[string]string{"answer": "42"}
	done.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionTrue, "Completed")}
	return []v1alpha1.AgentTaskStatus{pending, running, done}
}

func applyStatus(ctx context.Context, cs versioned.Interface, t *v1alpha1.AgentTask, st v1alpha1.AgentTaskStatus) (*v1alpha1.AgentTask, error) {
	status, err := statusApplyConfiguration(st)
	if err != nil {
		return nil, err
	}
	cfg := ac.AgentTask(t.Name, t.Namespace).WithResourceVersion(t.ResourceVersion).WithStatus(status)
	return cs.SchedulerV1alpha1().AgentTasks(t.Namespace).ApplyStatus(ctx, cfg, metav1.ApplyOptions{FieldManager: "bench", Force: true})
}

func mergeStatus(ctx context.Context, cs versioned.Interface, t *v1alpha1.AgentTask, st v1alpha1.AgentTaskStatus) (*v1alpha1.AgentTask, error) {
	old, err := json.Marshal(map[string]any{"status": t.Status})
	if err != nil {
		return nil, err
	}
	next, err := json.Marshal(map[string]any{"status": st, "metadata": map[string]string{"resourceVersion": t.ResourceVersion}})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.CreateMergePatch(old, next)
	if err != nil {
		return nil, err
	}
	return cs.SchedulerV1alpha1().AgentTasks(t.Namespace).Patch(ctx, t.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "bench"}, "status")
}

// apiserverPID finds the kube-apiserver serving host (https://127.0.0.1:PORT).
func apiserverPID(host string) (int, error) {
	port := strings.TrimSuffix(host[strings.LastIndex(host, ":")+1:], "/")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if !strings.HasSuffix(args[0], "kube-apiserver") {
			continue
		}
		for _, a := range args {
			if a == "--secure-port="+port {
				return strconv.Atoi(filepath.Base(d))
			}
		}
	}
	return 0, fmt.Errorf("no kube-apiserver process serves port %s", port)
}
