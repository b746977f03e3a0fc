package integration

// Fixtures and helpers shared by samples_test.go, validation_test.go and
// clients_test.go: valid base objects of the four scheduler kinds, clients,
// namespaces and conversions.

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/testkit"
)

// Kinds of the scheduler API group.
const (
	kindAgentTask          = "AgentTask"
	kindWorkflow           = "Workflow"
	kindUserDeployment     = "UserDeployment"
	kindDeploymentTemplate = "DeploymentTemplate"
	// kindAgent is the ossa.ai group's kind.
	kindAgent = "Agent"
)

// schedulerResources maps each kind of the suite to its resource and scope.
var schedulerResources = map[string]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	kindAgentTask:          {gvr: schedulerv1alpha1.SchemeGroupVersion.WithResource("agenttasks"), namespaced: true},
	kindWorkflow:           {gvr: schedulerv1alpha1.SchemeGroupVersion.WithResource("workflows"), namespaced: true},
	kindUserDeployment:     {gvr: schedulerv1alpha1.SchemeGroupVersion.WithResource("userdeployments"), namespaced: true},
	kindDeploymentTemplate: {gvr: schedulerv1alpha1.SchemeGroupVersion.WithResource("deploymenttemplates"), namespaced: false},
	kindAgent:              {gvr: ossav1.SchemeGroupVersion.WithResource("agents"), namespaced: true},
}

// newSchedulerClient returns the generated typed clientset.
func newSchedulerClient(t *testing.T, cfg *rest.Config) versioned.Interface {
	t.Helper()
	cs, err := versioned.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

// newDynamicClient returns a dynamic client.
func newDynamicClient(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	return dc
}

// ensureNamespace creates the namespace unless it exists. Namespaces are
// never deleted: without a namespace controller they would stay Terminating
// and refuse every later create.
func ensureNamespace(t *testing.T, cfg *rest.Config, name string) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = kc.CoreV1().Namespaces().Create(t.Context(), testkit.MakeBackendNamespace(name, ""), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err, "create namespace %s", name)
	}
}

// uniqueName appends a random suffix so runs and tests never collide.
func uniqueName(prefix string) string {
	return prefix + "-" + rand.String(6)
}

// resourceClient returns the dynamic client for u's kind, in u's namespace
// when the kind is namespaced.
func resourceClient(t *testing.T, dc dynamic.Interface, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gvk := u.GroupVersionKind()
	r, ok := schedulerResources[gvk.Kind]
	require.True(t, ok, "unknown kind %q", gvk.Kind)
	require.Equal(t, r.gvr.GroupVersion(), gvk.GroupVersion(), "object of another group: %s", gvk)
	if r.namespaced {
		return dc.Resource(r.gvr).Namespace(u.GetNamespace())
	}
	return dc.Resource(r.gvr)
}

// deleteOnCleanup deletes u when the test ends; NotFound is fine.
func deleteOnCleanup(t *testing.T, rc dynamic.ResourceInterface, name string) {
	t.Helper()
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		err := rc.Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean up %s: %v", name, err)
		}
	})
}

// toUnstructured converts a typed object through its JSON form, so omitempty
// fields stay absent, exactly as a client would send them.
func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	data, err := json.Marshal(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(data))
	// An empty status is noise in a request; the status subresource ignores it anyway.
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u
}

// fromUnstructured converts u into the typed object into, through JSON.
func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into runtime.Object) {
	t.Helper()
	data, err := u.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, into))
}

// statusCauses returns the causes of an API status error.
func statusCauses(err error) []metav1.StatusCause {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	return status.Status().Details.Causes
}

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: schedulerv1alpha1.SchemeGroupVersion.String(), Kind: kind}
}

// The valid* fixtures set every defaulted field, so what the apiserver
// returns equals what was sent.

// validAgentTask is an AgentTask using every spec field.
func validAgentTask(namespace, name string) *schedulerv1alpha1.AgentTask {
	return &schedulerv1alpha1.AgentTask{
		TypeMeta:   typeMeta(kindAgentTask),
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulerv1alpha1.AgentTaskSpec{
			TaskID:  "task-0001",
			UserID:  "alice",
			Image:   "ghcr.io/opsnorth/agents/review:1.2.0",
			Command: []string{"/agent"},
			Args:    []string{"--mode=review"},
			Input:   map[string]string{"PROMPT": "Review the change", "REPO_URL": "https://git.example.com/shop.git"},
			Resources: &schedulerv1alpha1.ResourceRequirements{
				Requests: &schedulerv1alpha1.ResourceAmounts{CPU: quantity("250m"), Memory: quantity("256Mi")},
				Limits:   &schedulerv1alpha1.ResourceAmounts{CPU: quantity("1"), Memory: quantity("1Gi")},
			},
			TimeoutSeconds:          ptr.To[int64](600),
			WebhookURL:              "https://hooks.example.com/agent-tasks",
			WebhookSecretRef:        &schedulerv1alpha1.SecretKeyReference{Name: "task-webhook", Key: "signing-key"},
			ServiceAccountName:      "review-agent",
			ImagePullSecrets:        []string{"ghcr-pull"},
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			AgentPod: schedulerv1alpha1.AgentPod{
				NodeSelector:      map[string]string{"pool": "agents"},
				Tolerations:       []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "agents", Effect: corev1.TaintEffectNoSchedule}},
				Affinity:          &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}},
				PriorityClassName: "agents-standard",
				RuntimeClassName:  "gvisor",
				PodMetadata:       &schedulerv1alpha1.PodMetadata{Labels: map[string]string{"team": "review"}, Annotations: map[string]string{"example.com/trace": "on"}},
			},
		},
	}
}

// validWorkflow is a three-step DAG (fetch -> analyze -> report) using every spec field.
func validWorkflow(namespace, name string) *schedulerv1alpha1.Workflow {
	return &schedulerv1alpha1.Workflow{
		TypeMeta:   typeMeta(kindWorkflow),
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulerv1alpha1.WorkflowSpec{
			UserID: "alice",
			Input:  map[string]string{"REPO_URL": "https://git.example.com/shop.git"},
			Steps: []schedulerv1alpha1.WorkflowStep{
				{
					Name:  "fetch",
					Image: "ghcr.io/opsnorth/agents/fetch:1.0.0",
					Input: map[string]string{"URL": "${inputs.REPO_URL}"},
				},
				{
					Name:           "analyze",
					Image:          "ghcr.io/opsnorth/agents/analyze:1.0.0",
					Command:        []string{"/agent"},
					Args:           []string{"--deep"},
					Input:          map[string]string{"SOURCE": "${steps.fetch.output.path}"},
					TimeoutSeconds: ptr.To[int64](900),
					Resources: &schedulerv1alpha1.ResourceRequirements{
						Requests: &schedulerv1alpha1.ResourceAmounts{CPU: quantity("500m")},
						Limits:   &schedulerv1alpha1.ResourceAmounts{CPU: quantity("2")},
					},
					ServiceAccountName: "analyze-agent",
					Retries:            &schedulerv1alpha1.RetryPolicy{Limit: 2, BackoffSeconds: ptr.To[int32](10), MaxBackoffSeconds: ptr.To[int32](120)},
					DependsOn:          []string{"fetch"},
				},
				{
					Name:      "report",
					Image:     "ghcr.io/opsnorth/agents/report:1.0.0",
					Input:     map[string]string{"FINDINGS": "${steps.1.output.findings}"},
					DependsOn: []string{"analyze"},
				},
			},
			TimeoutSeconds:   ptr.To[int64](3600),
			WebhookURL:       "https://hooks.example.com/workflows",
			WebhookSecretRef: &schedulerv1alpha1.SecretKeyReference{Name: "workflow-webhook", Key: "signing-key"},
		},
	}
}

// validUserDeployment is a UserDeployment made from a template, using most spec fields.
func validUserDeployment(namespace, name string) *schedulerv1alpha1.UserDeployment {
	return &schedulerv1alpha1.UserDeployment{
		TypeMeta:   typeMeta(kindUserDeployment),
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulerv1alpha1.UserDeploymentSpec{
			UserID:       "alice",
			Template:     "web-app",
			Tier:         "pro",
			DesiredState: schedulerv1alpha1.DesiredRunning,
			Secrets: []schedulerv1alpha1.SecretReference{
				{Name: "DATABASE_URL", RemoteRef: schedulerv1alpha1.RemoteSecretReference{Key: "shop", Property: "database_url"}},
			},
			ConfigData:         schedulerv1alpha1.EnvMap{"LOG_LEVEL": "debug"},
			ConfigFiles:        []schedulerv1alpha1.ConfigFile{{Path: "/etc/web-app/settings.yaml", Content: "currency: EUR\n"}},
			ServiceConfigData:  map[string]schedulerv1alpha1.EnvMap{"worker": {"CONCURRENCY": "8"}},
			ServiceConfigFiles: map[string]schedulerv1alpha1.ConfigFileList{"web": {{Path: "/etc/nginx/conf.d/extra.conf", Content: "gzip on;\n"}}},
			Visibility:         schedulerv1alpha1.VisibilityInternal,
			DependsOn:          []string{"shop-db"},
			Autoscaling:        &schedulerv1alpha1.Autoscaling{MinReplicas: 2, MaxReplicas: 5, TargetCPUUtilizationPercentage: 70},
		},
	}
}

// validImageUserDeployment is a UserDeployment running a single image.
func validImageUserDeployment(namespace, name string) *schedulerv1alpha1.UserDeployment {
	return &schedulerv1alpha1.UserDeployment{
		TypeMeta:   typeMeta(kindUserDeployment),
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulerv1alpha1.UserDeploymentSpec{
			UserID:        "bob",
			Image:         "ghcr.io/opsnorth/hello:2.0.1",
			ContainerPort: ptr.To[int32](8080),
			Replicas:      ptr.To[int32](2),
		},
	}
}

// validDeploymentTemplate has a web service (ports, expose, probes, resources,
// metrics) and a worker with storage. Defaulted fields are set, so what the
// apiserver returns equals what was sent.
func validDeploymentTemplate(name string) *schedulerv1alpha1.DeploymentTemplate {
	httpProbe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")},
		}}
	}
	return &schedulerv1alpha1.DeploymentTemplate{
		TypeMeta:   typeMeta(kindDeploymentTemplate),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: schedulerv1alpha1.DeploymentTemplateSpec{
			Description: "Web app with a worker",
			Services: []schedulerv1alpha1.TemplateService{
				{
					Name:  "web",
					Image: "ghcr.io/opsnorth/web-app:1.4.2",
					Env:   []schedulerv1alpha1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}},
					Ports: []schedulerv1alpha1.ServicePort{
						{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP},
						{Name: "metrics", Port: 9090, Protocol: corev1.ProtocolTCP},
					},
					Expose:      "http",
					ServiceType: schedulerv1alpha1.ServiceType("ClusterIP"),
					Resources: &schedulerv1alpha1.ResourceRequirements{
						Requests: &schedulerv1alpha1.ResourceAmounts{CPU: quantity("100m"), Memory: quantity("128Mi")},
						Limits:   &schedulerv1alpha1.ResourceAmounts{CPU: quantity("500m"), Memory: quantity("512Mi")},
					},
					ReadinessProbe: httpProbe("/readyz"),
					LivenessProbe:  httpProbe("/healthz"),
					Replicas:       ptr.To[int32](2),
					Metrics:        &schedulerv1alpha1.MetricsEndpoint{Port: "metrics", Path: "/metrics", Interval: "30s"},
				},
				{
					Name:        "worker",
					Image:       "ghcr.io/opsnorth/web-app-worker:1.4.2",
					Command:     []string{"/app/worker"},
					ServiceType: schedulerv1alpha1.ServiceType("NodePort"),
					Replicas:    ptr.To[int32](1),
					Storage:     &schedulerv1alpha1.Storage{Size: resource.MustParse("10Gi"), MountPath: "/var/lib/worker", WhenDeleted: schedulerv1alpha1.ClaimRetain},
				},
			},
		},
	}
}
