package tasks_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testkit"
)

// logs is what every manager of this test binary logs. The process has one
// logger, set once (manager.Run sets it only if nobody did), so it is set
// here, before any manager starts: zap's JSON lines at every verbosity,
// kept while a test armed the capture; error lines still go to stderr, as
// with the harness's --zap-log-level=error.
var logs = &logCapture{}

func init() {
	opts := crzap.Options{}
	fs := flag.NewFlagSet("zap", flag.PanicOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--zap-log-level=127"}); err != nil {
		panic(err)
	}
	opts.DestWriter = logs
	ctrl.SetLogger(crzap.New(crzap.UseFlagOptions(&opts)))
}

// logCapture is the zap destination: zap writes one entry per Write.
type logCapture struct {
	mu    sync.Mutex
	armed bool
	buf   bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed {
		c.buf.Write(p)
	}
	for _, level := range []string{`"level":"error"`, `"level":"dpanic"`, `"level":"panic"`, `"level":"fatal"`} {
		if bytes.Contains(p, []byte(level)) {
			_, _ = os.Stderr.Write(p)
			break
		}
	}
	return len(p), nil
}

// arm keeps what is logged from now until the test ends.
func (c *logCapture) arm(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = true
	c.buf.Reset()
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.armed = false
		c.buf.Reset()
	})
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// secretValue returns a value no test writes anywhere but in a Secret.
func secretValue(t *testing.T) string {
	b := make([]byte, 12)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "sk-test-" + hex.EncodeToString(b)
}

func (k *cluster) createSecret(name string, labels map[string]string, data map[string]string) {
	k.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: labels}, Data: map[string][]byte{}}
	for key, v := range data {
		s.Data[key] = []byte(v)
	}
	require.NoError(k.t, k.c.Create(k.t.Context(), s))
}

// updateSecret replaces the Secret's data.
func (k *cluster) updateSecret(name string, data map[string]string) {
	k.t.Helper()
	s := &corev1.Secret{}
	require.NoError(k.t, k.c.Get(k.t.Context(), client.ObjectKey{Namespace: k.ns, Name: name}, s))
	s.Data = map[string][]byte{}
	for key, v := range data {
		s.Data[key] = []byte(v)
	}
	require.NoError(k.t, k.c.Update(k.t.Context(), s))
}

// waitJobCreated waits for the task's Job and says how long that took since from.
func (k *cluster) waitJobCreated(name string, from time.Time) {
	k.t.Helper()
	require.Eventually(k.t, func() bool { return len(k.jobsOf(name)) == 1 }, wait, 20*time.Millisecond,
		"the Job of %s is created once the Secret is right", name)
	k.t.Logf("Secret fixed → Job of %s created: %s", name, time.Since(from).Round(time.Millisecond))
}

func env(name, secret, key string) v1alpha1.SecretEnvVar {
	return v1alpha1.SecretEnvVar{Name: name, ValueFrom: v1alpha1.SecretEnvSource{
		SecretKeyRef: v1alpha1.SecretKeyReference{Name: secret, Key: key}}}
}

func envFrom(prefix, secret string) v1alpha1.SecretEnvFromSource {
	return v1alpha1.SecretEnvFromSource{Prefix: prefix, SecretRef: v1alpha1.SecretNameReference{Name: secret}}
}

// TestSecretInputs: a task's env and envFrom become its container's
// secretKeyRefs, one per key envFrom's Secrets had when checked; a Secret not labelled for the user
// fails the task, a missing Secret, a missing key or a refused envFrom key
// keeps it Pending with the reason until the Secret is fixed, or until the
// start timeout fails it with the same reason.
func TestSecretInputs(t *testing.T) {
	k := newCluster(t, "tasks-secret-env")
	own := map[string]string{labelkeys.User: "user-1"}
	shared := map[string]string{labelkeys.Shared: labelkeys.SharedValue}
	value := secretValue(t)
	k.createSecret("llm", own, map[string]string{"api-key": value, "org": "acme"})
	k.createSecret("github", shared, map[string]string{"TOKEN": value})
	k.createSecret("bob-llm", map[string]string{labelkeys.User: "bob"}, map[string]string{"api-key": value})
	k.createSecret("plain", nil, map[string]string{"TOKEN": value})
	startManager(t, k.ns, testArgs(true)...)

	t.Run("env and envFrom as given", func(t *testing.T) {
		k := k.with(t)
		k.createSecret("llm-extra", own, map[string]string{"EXTRA": "x"})
		k.createTask("wired", func(at *v1alpha1.AgentTask) {
			at.Spec.Input = map[string]string{"PROMPT": "hi"}
			at.Spec.Env = []v1alpha1.SecretEnvVar{env("ORG", "llm", "org"), env("API_KEY", "llm", "api-key")}
			at.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("GH_", "github"), envFrom("", "llm-extra")}
		})
		c := k.job("wired").Spec.Template.Spec.Containers[0]
		keyRef := func(name, secret, key string) corev1.EnvVar {
			return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key, Optional: ptr.To(false)}}}
		}
		assert.Equal(t, []corev1.EnvVar{{Name: "PROMPT", Value: "hi"}, keyRef("ORG", "llm", "org"), keyRef("API_KEY", "llm", "api-key"),
			keyRef("GH_TOKEN", "github", "TOKEN"), keyRef("EXTRA", "llm-extra", "EXTRA")}, c.Env,
			"envFrom is expanded to the keys checked")
		assert.Empty(t, c.EnvFrom, "a key added to a Secret after the check (LD_PRELOAD) can never reach the agent")
	})

	refused := func(field, secret string) string {
		return field + ": not allowed for this user: Secret " + k.ns + "/" + secret +
			" is labelled neither scheduler.opsnorth.io/user=user-1 nor scheduler.opsnorth.io/shared=true"
	}
	for _, tc := range []struct {
		name, task, message string
		mutate              func(*v1alpha1.AgentTask)
	}{
		{"another user's Secret through env", "bob-env", refused("spec.env[1].valueFrom.secretKeyRef.name", "bob-llm"),
			func(at *v1alpha1.AgentTask) {
				at.Spec.Env = []v1alpha1.SecretEnvVar{env("ORG", "llm", "org"), env("API_KEY", "bob-llm", "api-key")}
			}},
		{"an unlabelled Secret through envFrom", "plain-from", refused("spec.envFrom[0].secretRef.name", "plain"),
			func(at *v1alpha1.AgentTask) { at.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("", "plain")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := k.with(t)
			k.createTask(tc.task, tc.mutate)
			failed := k.waitPhase(tc.task, v1alpha1.TaskFailed)
			assert.Equal(t, tasks.ReasonReferenceNotAllowed, failed.Status.Reason)
			assert.Equal(t, tc.message, failed.Status.Message)
			assert.Empty(t, k.jobsOf(tc.task), "no Job")
		})
	}

	// Each waits with its reason, then heals when the Secret is fixed.
	for _, tc := range []struct {
		name, task, reason, message string
		mutate                      func(*v1alpha1.AgentTask)
		fix                         func(k *cluster)
	}{
		{
			name: "missing Secret", task: "late-secret", reason: tasks.ReasonSecretNotFound,
			message: "spec.env[0].valueFrom.secretKeyRef.name: Secret " + k.ns + "/late-llm not found",
			mutate: func(at *v1alpha1.AgentTask) {
				at.Spec.Env = []v1alpha1.SecretEnvVar{env("API_KEY", "late-llm", "api-key")}
			},
			fix: func(k *cluster) { k.createSecret("late-llm", own, map[string]string{"api-key": value}) },
		},
		{
			name: "missing Secret through envFrom", task: "late-from", reason: tasks.ReasonSecretNotFound,
			message: "spec.envFrom[0].secretRef.name: Secret " + k.ns + "/late-gh not found",
			mutate: func(at *v1alpha1.AgentTask) {
				at.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("GH_", "late-gh")}
			},
			fix: func(k *cluster) { k.createSecret("late-gh", shared, map[string]string{"TOKEN": value}) },
		},
		{
			name: "missing key", task: "no-key", reason: tasks.ReasonSecretKeyNotFound,
			message: `spec.env[1].valueFrom.secretKeyRef.key: Secret ` + k.ns + `/keyless has no key "api-key"`,
			mutate: func(at *v1alpha1.AgentTask) {
				at.Spec.Env = []v1alpha1.SecretEnvVar{env("ORG", "keyless", "org"), env("API_KEY", "keyless", "api-key")}
			},
			fix: func(k *cluster) { k.updateSecret("keyless", map[string]string{"org": "acme", "api-key": value}) },
		},
		{
			name: "refused envFrom key", task: "preload", reason: tasks.ReasonSecretKeyRefused,
			message: `spec.envFrom[1]: key "LD_PRELOAD" of Secret ` + k.ns + `/preload makes the environment variable "LD_PRELOAD", which is refused: ` +
				`it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees`,
			mutate: func(at *v1alpha1.AgentTask) {
				at.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("GH_", "github"), envFrom("", "preload")}
			},
			fix: func(k *cluster) { k.updateSecret("preload", map[string]string{"TOKEN": value}) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := k.with(t)
			switch tc.task {
			case "no-key":
				k.createSecret("keyless", own, map[string]string{"org": "acme", "api_key": value})
			case "preload":
				k.createSecret("preload", own, map[string]string{"TOKEN": value, "LD_PRELOAD": "/tmp/x.so"})
			}
			k.createTask(tc.task, tc.mutate)
			got, took := k.waitReason(tc.task, tc.reason)
			t.Logf("created → %s: %s", tc.reason, took.Round(time.Millisecond))
			assert.Equal(t, v1alpha1.TaskPending, got.Status.Phase)
			assert.Equal(t, tc.message, got.Status.Message)
			assert.Empty(t, got.Status.JobName)
			assert.Empty(t, k.jobsOf(tc.task), "no Job while the Secret is not right")

			tc.fix(k)
			k.waitJobCreated(tc.task, time.Now())
		})
	}

	t.Run("the start timeout fails a task whose Secret stays wrong", func(t *testing.T) {
		k := k.with(t)
		k.createSecret("clash", own, map[string]string{"PROMPT": value})
		k.createTask("clash", func(at *v1alpha1.AgentTask) {
			at.Spec.Input = map[string]string{"PROMPT": "hi"}
			at.Spec.StartTimeoutSeconds = ptr.To[int64](3)
			at.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("", "clash")}
		})
		failed := k.waitPhase("clash", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonSecretKeyRefused, failed.Status.Reason)
		assert.Equal(t, `the agent did not start within 3s: spec.envFrom[0]: key "PROMPT" of Secret `+k.ns+
			`/clash makes the environment variable "PROMPT", which is set by spec.input already`, failed.Status.Message)
		assert.Empty(t, k.jobsOf("clash"), "no Job")
	})
}

// TestSecretValuesNeverShown: a task that read a Secret through env and
// envFrom waits for a missing key, then for a refused one to go, then
// starts and succeeds; another fails at its start timeout over a refused
// key. The value of those keys is in none of the stored tasks, their Jobs
// and pods, the namespace's Events, the completion webhooks' requests and
// what the manager logged at any verbosity, in any form a value takes
// when printed (as written, base64, hex, or bytes as fmt prints them).
func TestSecretValuesNeverShown(t *testing.T) {
	logs.arm(t)
	k := newCluster(t, "tasks-secret-quiet")
	value := secretValue(t)
	own := map[string]string{labelkeys.User: "user-1"}
	k.createSecret("llm", own, map[string]string{"other": value})
	k.createSecret("github", own, map[string]string{"TOKEN": value, "LD_PRELOAD": value})
	k.createSecret("preload", own, map[string]string{"LD_PRELOAD": value})
	startManager(t, k.ns, testArgs(true)...)
	receiver := testkit.NewReceiver(t, testkit.OK)

	k.createTask("quiet", func(at *v1alpha1.AgentTask) {
		at.Spec.Input = map[string]string{"PROMPT": "hi"}
		at.Spec.WebhookURL = receiver.URL + "/done"
		at.Spec.Env = []v1alpha1.SecretEnvVar{env("API_KEY", "llm", "api-key")}
		at.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("", "github")}
	})
	k.createTask("refused", func(at *v1alpha1.AgentTask) {
		at.Spec.WebhookURL = receiver.URL + "/done"
		at.Spec.StartTimeoutSeconds = ptr.To[int64](2)
		at.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("", "preload")}
	})
	k.waitReason("quiet", tasks.ReasonSecretKeyNotFound)
	k.updateSecret("llm", map[string]string{"api-key": value, "other": value})
	k.waitReason("quiet", tasks.ReasonSecretKeyRefused)
	k.updateSecret("github", map[string]string{"TOKEN": value})
	k.succeed("quiet", `{"answer":"42"}`)
	k.waitPhase("quiet", v1alpha1.TaskSucceeded)
	failed := k.waitPhase("refused", v1alpha1.TaskFailed)
	assert.Equal(t, tasks.ReasonSecretKeyRefused, failed.Status.Reason)
	for _, name := range []string{"quiet", "refused"} {
		k.waitWebhook(name, func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
	}
	events := &eventsv1.EventList{}
	require.Eventually(t, func() bool {
		require.NoError(t, k.c.List(t.Context(), events, client.InNamespace(k.ns)))
		ended := map[string]bool{}
		for _, e := range events.Items {
			ended[e.Regarding.Name+" "+e.Reason] = true
		}
		return ended["quiet "+string(v1alpha1.TaskSucceeded)] && ended["refused "+string(v1alpha1.TaskFailed)]
	}, wait, 50*time.Millisecond, "an Event of each task's end")

	shown := map[string]string{}
	marshal := func(what string, obj any) {
		data, err := json.Marshal(obj)
		require.NoError(t, err)
		shown[what] = string(data)
	}
	stored, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	marshal("the tasks", stored)
	jobs := &batchv1.JobList{}
	require.NoError(t, k.c.List(t.Context(), jobs, client.InNamespace(k.ns)))
	marshal("the Jobs and their pod templates", jobs)
	pods := &corev1.PodList{}
	require.NoError(t, k.c.List(t.Context(), pods, client.InNamespace(k.ns)))
	marshal("the pods", pods)
	marshal("the Events", events)
	coreEvents := &corev1.EventList{}
	require.NoError(t, k.c.List(t.Context(), coreEvents, client.InNamespace(k.ns)))
	marshal("the Events through the core API", coreEvents)
	marshal("the webhook requests", receiver.Requests())
	shown["the manager's logs"] = logs.String()

	require.Len(t, stored.Items, 2)
	require.Len(t, jobs.Items, 1)
	require.Len(t, receiver.Requests(), 2)
	require.Contains(t, shown["the manager's logs"], `"job":"quiet"`, "the capture holds this manager's logs")
	require.Contains(t, shown["the Jobs and their pod templates"], `"secretKeyRef":{"name":"llm","key":"api-key"`)
	require.Contains(t, shown["the Events"], `key \"LD_PRELOAD\" of Secret `+k.ns+`/preload`, "the refusal, named")
	// As written, as JSON writes []byte, as hex, as fmt prints []byte (the
	// String of a Secret, which zap logs, prints its data so).
	var decimal []string
	for _, b := range []byte(value) {
		decimal = append(decimal, strconv.Itoa(int(b)))
	}
	forms := []string{value, base64.StdEncoding.EncodeToString([]byte(value)), hex.EncodeToString([]byte(value)),
		strings.Join(decimal, " ")}
	for what, text := range shown {
		for _, form := range forms {
			assert.NotContains(t, text, form, "the Secret's value in %s", what)
		}
	}
	t.Logf("checked %d bytes of logs, %d Events, %d webhook requests", len(shown["the manager's logs"]), len(events.Items), len(receiver.Requests()))
}
