package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"opsnorth.io/scheduler/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.RunMain(m) }

// configManager is a recordingManager with a rest config.
type configManager struct {
	recordingManager
	cfg *rest.Config
}

func (m *configManager) GetConfig() *rest.Config { return m.cfg }

var podKind = KubeKind{
	Object: &corev1.Pod{}, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
	Select: func(o *metav1.ListOptions) { o.LabelSelector = "app=x" },
}

// TestKubeInformers: informers of a kind list what it selects, in the
// watched namespaces or in all, trimmed as it says, and run and sync with
// the manager's runnable.
func TestKubeInformers(t *testing.T) {
	env := testenv.Require(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	suffix := rand.String(5)
	a, b, c := "kube-a-"+suffix, "kube-b-"+suffix, "kube-c-"+suffix
	for _, ns := range []string{a, b, c} {
		_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, p := range []struct{ ns, name, app string }{{a, "mine", "x"}, {a, "other", "y"}, {c, "elsewhere", "x"}} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Labels: map[string]string{"app": p.app}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		_, err := cs.CoreV1().Pods(p.ns).Create(t.Context(), pod, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	m := &configManager{recordingManager: recordingManager{readyz: map[string]healthz.Checker{}}, cfg: env.Config}
	k, err := newKubeInformers(m, Namespaces{a, b})
	require.NoError(t, err)
	require.Len(t, m.runnables, 1, "one runnable runs every informer")
	watched, err := k.Watched(podKind)
	require.NoError(t, err)
	require.Len(t, watched, 2)
	unlabelled := podKind
	unlabelled.Transform = func(obj any) (any, error) {
		obj.(*corev1.Pod).Labels = nil
		return obj, nil
	}
	all, err := k.AllNamespaces(unlabelled)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.runnables[0].Start(ctx) }()
	require.Eventually(t, func() bool { return m.readyz["kube-informers"](nil) == nil }, 30*time.Second, 20*time.Millisecond)

	names := func(inf toolscache.SharedIndexInformer) []string {
		var out []string
		for _, o := range inf.GetStore().List() {
			pod := o.(*corev1.Pod)
			out = append(out, pod.Namespace+"/"+pod.Name)
		}
		return out
	}
	assert.ElementsMatch(t, []string{a + "/mine"}, names(watched[a]))
	assert.Empty(t, names(watched[b]))
	for _, o := range watched[a].GetStore().List() {
		assert.Empty(t, o.(*corev1.Pod).ManagedFields, "managed fields are not cached by default")
	}
	assert.ElementsMatch(t, []string{a + "/mine", c + "/elsewhere"}, names(all), "all namespaces, whatever the manager watches")
	for _, o := range all.GetStore().List() {
		assert.Empty(t, o.(*corev1.Pod).Labels, "the kind's own transform")
		assert.NotEmpty(t, o.(*corev1.Pod).ManagedFields, "in place of the default")
	}
	got, err := toolscache.NewGenericLister(watched[a].GetIndexer(), podKind.Resource.GroupResource()).ByNamespace(a).Get("mine")
	require.NoError(t, err, "listers read the informers")
	assert.Equal(t, map[string]string{"app": "x"}, got.(*corev1.Pod).Labels)

	cancel()
	require.NoError(t, <-done)
}

func TestKubeInformersWatchedAll(t *testing.T) {
	m := &configManager{recordingManager: recordingManager{readyz: map[string]healthz.Checker{}}, cfg: &rest.Config{Host: "https://127.0.0.1:1"}}
	k, err := newKubeInformers(m, nil)
	require.NoError(t, err)
	got, err := k.Watched(podKind)
	require.NoError(t, err)
	assert.Len(t, got, 1)
	assert.Contains(t, got, "", fmt.Sprintf("one informer for all namespaces, got %v", got))
}
