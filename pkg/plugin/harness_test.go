package plugin

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/testenv"
)

// The commands run against a real kube-apiserver; no controller runs, so
// each test writes the statuses the managers would.
func TestMain(m *testing.M) { testenv.RunMain(m, testenv.WithoutThirdPartyCRDs()) }

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// t0 is the fixtures' clock origin; every command runs at now.
var (
	t0  = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	now = t0.Add(5 * time.Minute)
)

// at is t0 plus seconds, as a status time.
func at(seconds int) *metav1.Time {
	return new(metav1.NewTime(t0.Add(time.Duration(seconds) * time.Second)))
}

// user is who the commands authenticate as.
const user = "alice"

// cluster is one test's namespace, its admin clients and a kubeconfig the
// commands use.
type cluster struct {
	t          *testing.T
	cs         versioned.Interface
	kube       kubernetes.Interface
	ns         string
	kubeconfig string
	// logs are what the log streamer serves, by pod name.
	logs map[string]string
}

// newCluster creates namespace ns (fixed, so it shows the same in golden
// files) and a kubeconfig of user alice, a cluster admin.
func newCluster(t *testing.T, ns string) *cluster {
	t.Helper()
	env := testenv.Require(t)
	cs, err := versioned.NewForConfig(env.Config)
	require.NoError(t, err)
	kube, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	_, err = kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	kubeconfig, err := env.KubeconfigFor(t.TempDir(), user, "system:masters")
	require.NoError(t, err)
	return &cluster{t: t, cs: cs, kube: kube, ns: ns, kubeconfig: kubeconfig, logs: map[string]string{}}
}

// in returns the cluster for subtest t.
func (k *cluster) in(t *testing.T) *cluster {
	c := *k
	c.t = t
	return &c
}

// result is what one command printed and returned.
type result struct {
	out, errOut string
	err         error
}

// text is the result as golden files hold it: stdout, then stderr.
func (r result) text() string {
	if r.errOut == "" {
		return r.out
	}
	return r.out + "--- stderr\n" + r.errOut
}

// run runs `kubectl opsnorth args...` in the test's namespace at now.
func (k *cluster) run(args ...string) result {
	k.t.Helper()
	return k.runContext(k.t.Context(), &syncBuffer{}, args...)
}

// runContext runs the command in ctx, writing its stdout to out.
func (k *cluster) runContext(ctx context.Context, out *syncBuffer, args ...string) result {
	return k.runWith(ctx, out, nil, args...)
}

// runWith is runContext with the options changed by mod first.
func (k *cluster) runWith(ctx context.Context, out *syncBuffer, mod func(*Options), args ...string) result {
	var errOut bytes.Buffer
	o := k.options(out, &errOut)
	if mod != nil {
		mod(o)
	}
	cmd := NewCommand(o)
	cmd.SetArgs(append([]string{"--kubeconfig=" + k.kubeconfig, "--namespace=" + k.ns}, args...))
	cmd.SetOut(out)
	cmd.SetErr(&errOut)
	err := Execute(ctx, cmd, &errOut)
	return result{out: out.String(), errOut: errOut.String(), err: err}
}

func (k *cluster) options(out, errOut io.Writer) *Options {
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	o.Now = func() time.Time { return now }
	o.StreamLogs = func(_ context.Context, _ kubernetes.Interface, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
		text, ok := k.logs[pod]
		if !ok {
			return nil, fmt.Errorf("no log served for pod %s", pod)
		}
		return io.NopCloser(strings.NewReader(fmt.Sprintf("[%s/%s container=%s follow=%t]\n%s", namespace, pod, opts.Container, opts.Follow, text))), nil
	}
	return o
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// volatile are the fields the API server sets differently on every run.
var volatile = regexp.MustCompile(`("?(uid|resourceVersion|creationTimestamp)"?: )"?[^",\n]+"?`)

// golden compares got with testdata/NAME.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = volatile.ReplaceAllString(got, `$1"<scrubbed>"`)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run the test with -update")
	assert.Equal(t, string(want), got, "output differs from %s (rewrite it with -update)", path)
}

// createWorkflow creates wf in the test's namespace and writes its status.
func (k *cluster) createWorkflow(wf *v1alpha1.Workflow) *v1alpha1.Workflow {
	k.t.Helper()
	status := wf.Status
	wf.Namespace = k.ns
	created, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Create(k.t.Context(), wf, metav1.CreateOptions{})
	require.NoError(k.t, err)
	created.Status = status
	created, err = k.cs.SchedulerV1alpha1().Workflows(k.ns).UpdateStatus(k.t.Context(), created, metav1.UpdateOptions{})
	require.NoError(k.t, err)
	return created
}

// setWorkflowStatus rewrites the workflow's status.
func (k *cluster) setWorkflowStatus(name string, mutate func(*v1alpha1.WorkflowStatus)) {
	k.t.Helper()
	wf := k.workflow(name)
	mutate(&wf.Status)
	_, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).UpdateStatus(k.t.Context(), wf, metav1.UpdateOptions{})
	require.NoError(k.t, err)
}

func (k *cluster) workflow(name string) *v1alpha1.Workflow {
	k.t.Helper()
	wf, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Get(k.t.Context(), name, metav1.GetOptions{})
	require.NoError(k.t, err)
	return wf
}

// createTask creates task in the test's namespace and writes its status.
func (k *cluster) createTask(task *v1alpha1.AgentTask) *v1alpha1.AgentTask {
	k.t.Helper()
	status := task.Status
	task.Namespace = k.ns
	created, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Create(k.t.Context(), task, metav1.CreateOptions{})
	require.NoError(k.t, err)
	created.Status = status
	created, err = k.cs.SchedulerV1alpha1().AgentTasks(k.ns).UpdateStatus(k.t.Context(), created, metav1.UpdateOptions{})
	require.NoError(k.t, err)
	return created
}

// setTaskStatus rewrites the task's status.
func (k *cluster) setTaskStatus(name string, mutate func(*v1alpha1.AgentTaskStatus)) {
	k.t.Helper()
	task, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(k.t.Context(), name, metav1.GetOptions{})
	require.NoError(k.t, err)
	mutate(&task.Status)
	_, err = k.cs.SchedulerV1alpha1().AgentTasks(k.ns).UpdateStatus(k.t.Context(), task, metav1.UpdateOptions{})
	require.NoError(k.t, err)
}

// createUserDeployment creates ud in the test's namespace and writes its status.
func (k *cluster) createUserDeployment(ud *v1alpha1.UserDeployment) {
	k.t.Helper()
	status := ud.Status
	ud.Namespace = k.ns
	created, err := k.cs.SchedulerV1alpha1().UserDeployments(k.ns).Create(k.t.Context(), ud, metav1.CreateOptions{})
	require.NoError(k.t, err)
	created.Status = status
	_, err = k.cs.SchedulerV1alpha1().UserDeployments(k.ns).UpdateStatus(k.t.Context(), created, metav1.UpdateOptions{})
	require.NoError(k.t, err)
}
