//go:build chaos

package chaos

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/testkit"
)

// corpusNamespace holds the namespaced objects of the bad-input corpus.
const corpusNamespace = "chaos-invalid"

// badInput is one document of testdata/invalid: an object breaking one rule,
// and the field and message kubectl must print when the apiserver refuses it.
type badInput struct {
	file, name, kind string
	doc              []byte
	// field and msg are what `kubectl create` prints; applyField and
	// applyMsg what `kubectl apply --server-side` prints, which refuses
	// duplicate list-map keys itself, before validation.
	field, msg           string
	applyField, applyMsg string
}

// resources maps the scheduler kinds to their resources and scope.
var resources = map[string]struct {
	resource   string
	namespaced bool
}{
	"AgentTask":          {"agenttasks", true},
	"Workflow":           {"workflows", true},
	"UserDeployment":     {"userdeployments", true},
	"DeploymentTemplate": {"deploymenttemplates", false},
}

// loadCorpus reads every document of testdata/invalid/*.yaml with its
// leading "# expect: <field> | <message>" comment.
func loadCorpus(t *testing.T) []badInput {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.yaml"))
	require.NoError(t, err)
	var out []badInput
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, doc := range strings.Split(string(data), "\n---\n") {
			in := badInput{file: filepath.Base(f), doc: []byte(doc)}
			for line := range strings.SplitSeq(doc, "\n") {
				key, rest, ok := strings.Cut(line, ": ")
				if !ok || (key != "# expect" && key != "# expect-apply") {
					continue
				}
				field, msg, found := strings.Cut(rest, " | ")
				require.True(t, found, "%s document %d: %s needs '<field> | <message>'", f, i, key)
				if key == "# expect" {
					in.field, in.msg = field, msg
				} else {
					in.applyField, in.applyMsg = field, msg
				}
			}
			if in.applyField == "" {
				in.applyField, in.applyMsg = in.field, in.msg
			}
			var obj unstructured.Unstructured
			require.NoError(t, yaml.Unmarshal(in.doc, &obj.Object), "%s document %d", f, i)
			in.name, in.kind = obj.GetName(), obj.GetKind()
			require.NotEmpty(t, in.field, "%s document %d (%s) has no expect comment", f, i, in.name)
			out = append(out, in)
		}
	}
	return out
}

// TestBadInputCorpus applies every invalid object of testdata/invalid with the
// cluster's kubectl (alternating create and server-side apply): each must be
// refused with its field and message in kubectl's stderr, and nothing stored.
func TestBadInputCorpus(t *testing.T) {
	c := requireCluster(t)
	corpus := loadCorpus(t)
	require.GreaterOrEqual(t, len(corpus), 60, "the corpus must hold at least 60 invalid objects")
	_, err := c.Clientset.CoreV1().Namespaces().Create(t.Context(), testkit.MakeBackendNamespace(corpusNamespace, ""), metav1.CreateOptions{})
	require.NoError(t, err)
	perKind := map[string]int{}
	refused := 0
	start := time.Now()
	for _, in := range corpus {
		for _, verb := range []string{"create", "apply"} {
			t.Run(in.file+"/"+in.name+"/"+verb, func(t *testing.T) {
				field, msg := in.field, in.msg
				args := []string{"--kubeconfig=" + c.AdminKubeconfig, "-n", corpusNamespace, "create", "-f", "-"}
				if verb == "apply" {
					field, msg = in.applyField, in.applyMsg
					args = []string{"--kubeconfig=" + c.AdminKubeconfig, "-n", corpusNamespace, "apply", "--server-side", "-f", "-"}
				}
				stderr := refuse(t, c, in, args)
				assert.Contains(t, stderr, field+":", "the refusal names the field")
				assert.Contains(t, stderr, msg, "the refusal carries the rule's message")
				requireNotStored(t, c, in)
				if !t.Failed() {
					refused++
					perKind[in.kind+"/"+verb]++
				}
			})
		}
	}
	record(t, "bad_input_corpus", "objects", len(corpus))
	record(t, "bad_input_corpus", "kubectl_calls", 2*len(corpus))
	record(t, "bad_input_corpus", "refused_with_expected_message", refused)
	record(t, "bad_input_corpus", "per_kind", perKind)
	record(t, "bad_input_corpus", "seconds", time.Since(start).Seconds())
	assert.Equal(t, 2*len(corpus), refused)
}

// refuse runs kubectl with the document on stdin, requires it to fail, and
// returns its stderr.
func refuse(t *testing.T, c *localcluster.Cluster, in badInput, args []string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), c.Binary("kubectl"), args...)
	cmd.Stdin = bytes.NewReader(in.doc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.Error(t, cmd.Run(), "kubectl %s accepted %s: %s", args[3], in.name, stdout.String())
	return stderr.String()
}

// requireNotStored requires a get of the refused object to be NotFound.
func requireNotStored(t *testing.T, c *localcluster.Cluster, in badInput) {
	t.Helper()
	r := resources[in.kind]
	ri := c.Dynamic.Resource(schema.GroupVersionResource{Group: "scheduler.opsnorth.io", Version: "v1alpha1", Resource: r.resource})
	var err error
	if r.namespaced {
		_, err = ri.Namespace(corpusNamespace).Get(t.Context(), in.name, metav1.GetOptions{})
	} else {
		_, err = ri.Get(t.Context(), in.name, metav1.GetOptions{})
	}
	require.True(t, apierrors.IsNotFound(err), "%s %s was stored (get: %v)", in.kind, in.name, err)
}
