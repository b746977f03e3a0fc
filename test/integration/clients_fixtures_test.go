package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	schedulerac "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/generated/informers/externalversions"
)

// clientsNamespace holds the objects of the generated-client tests.
const clientsNamespace = "it-clients"

// Field managers of the server-side apply tests.
const (
	specManager   = "clients-test"
	statusManager = "clients-test-status"
)

// object is a typed scheduler object.
type object interface {
	runtime.Object
	metav1.Object
}

// typedClient is what the generated clientset offers for every kind; each
// generated XInterface satisfies it.
type typedClient[T object, L runtime.Object, A any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Apply(ctx context.Context, obj A, opts metav1.ApplyOptions) (T, error)
	ApplyStatus(ctx context.Context, obj A, opts metav1.ApplyOptions) (T, error)
}

// kindFixture tells the generic client tests how to handle one kind.
type kindFixture[T object, L runtime.Object, A any] struct {
	client func(cs versioned.Interface, ns string) typedClient[T, L, A]
	// lister registers the kind's informer in f and returns its lister's Get.
	lister func(f externalversions.SharedInformerFactory, ns string) func(name string) (T, error)
	// names lists the names of a List's items.
	names func(L) []string

	newObject   func(ns, name string) T
	spec        func(T) any
	setStatus   func(T)
	checkStatus func(*testing.T, T)

	applySpec          func(ns, name string) A
	checkAppliedSpec   func(*testing.T, T)
	applyStatus        func(ns, name string) A
	checkAppliedStatus func(*testing.T, T)
}

func condition(typ, reason string) metav1.Condition {
	return metav1.Condition{
		Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: "set by the client test",
		ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)),
	}
}

func conditionApply(typ, reason string) *metav1ac.ConditionApplyConfiguration {
	return metav1ac.Condition().WithType(typ).WithStatus(metav1.ConditionTrue).WithReason(reason).
		WithMessage("applied by the client test").WithObservedGeneration(1).WithLastTransitionTime(metav1.Now())
}

var agentTaskFixture = kindFixture[*agentTask, *schedulerv1alpha1.AgentTaskList, *schedulerac.AgentTaskApplyConfiguration]{
	client: func(cs versioned.Interface, ns string) typedClient[*agentTask, *schedulerv1alpha1.AgentTaskList, *schedulerac.AgentTaskApplyConfiguration] {
		return cs.SchedulerV1alpha1().AgentTasks(ns)
	},
	lister: func(f externalversions.SharedInformerFactory, ns string) func(string) (*agentTask, error) {
		return f.Scheduler().V1alpha1().AgentTasks().Lister().AgentTasks(ns).Get
	},
	names: func(l *schedulerv1alpha1.AgentTaskList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: validAgentTask,
	spec:      func(a *agentTask) any { return a.Spec },
	setStatus: func(a *agentTask) {
		a.Status.Phase = schedulerv1alpha1.TaskRunning
		a.Status.JobName = a.Name
		a.Status.ObservedGeneration = 1
		a.Status.Conditions = []metav1.Condition{condition(schedulerv1alpha1.ConditionReconciling, "JobRunning")}
	},
	checkStatus: func(t *testing.T, a *agentTask) {
		assert.Equal(t, schedulerv1alpha1.TaskRunning, a.Status.Phase)
		assert.Equal(t, a.Name, a.Status.JobName)
		require.Len(t, a.Status.Conditions, 1)
		assert.Equal(t, "JobRunning", a.Status.Conditions[0].Reason)
	},
	applySpec: func(ns, name string) *schedulerac.AgentTaskApplyConfiguration {
		return schedulerac.AgentTask(name, ns).WithSpec(schedulerac.AgentTaskSpec().
			WithTaskID("apply-0001").WithUserID("alice").WithImage("ghcr.io/opsnorth/agents/echo:1.0.0").
			WithInput(map[string]string{"PROMPT": "hello"}).WithTimeoutSeconds(300).
			WithResources(schedulerac.ResourceRequirements().
				WithRequests(schedulerac.ResourceAmounts().WithCPU(resource.MustParse("100m"))).
				WithLimits(schedulerac.ResourceAmounts().WithCPU(resource.MustParse("1")))))
	},
	checkAppliedSpec: func(t *testing.T, a *agentTask) {
		assert.Equal(t, "apply-0001", a.Spec.TaskID)
		assert.Equal(t, schedulerv1alpha1.TaskInput{"PROMPT": "hello"}, a.Spec.Input)
		assert.Equal(t, ptr.To[int64](300), a.Spec.TimeoutSeconds)
		require.NotNil(t, a.Spec.Resources)
		assert.Equal(t, "100m", a.Spec.Resources.Requests.CPU.String())
	},
	applyStatus: func(ns, name string) *schedulerac.AgentTaskApplyConfiguration {
		return schedulerac.AgentTask(name, ns).WithStatus(schedulerac.AgentTaskStatus().
			WithPhase(schedulerv1alpha1.TaskSucceeded).WithExitCode(0).WithReason("Completed").
			WithOutput(map[string]string{"result": "ok"}).
			WithConditions(conditionApply(schedulerv1alpha1.ConditionReady, "Succeeded")))
	},
	checkAppliedStatus: func(t *testing.T, a *agentTask) {
		assert.Equal(t, schedulerv1alpha1.TaskSucceeded, a.Status.Phase)
		assert.Equal(t, ptr.To[int32](0), a.Status.ExitCode)
		assert.Equal(t, map[string]string{"result": "ok"}, a.Status.Output)
	},
}

var workflowFixture = kindFixture[*workflow, *schedulerv1alpha1.WorkflowList, *schedulerac.WorkflowApplyConfiguration]{
	client: func(cs versioned.Interface, ns string) typedClient[*workflow, *schedulerv1alpha1.WorkflowList, *schedulerac.WorkflowApplyConfiguration] {
		return cs.SchedulerV1alpha1().Workflows(ns)
	},
	lister: func(f externalversions.SharedInformerFactory, ns string) func(string) (*workflow, error) {
		return f.Scheduler().V1alpha1().Workflows().Lister().Workflows(ns).Get
	},
	names: func(l *schedulerv1alpha1.WorkflowList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: validWorkflow,
	spec:      func(w *workflow) any { return w.Spec },
	setStatus: func(w *workflow) {
		w.Status.Phase = schedulerv1alpha1.WorkflowRunning
		w.Status.CurrentStep = 1
		w.Status.StepStatuses = []schedulerv1alpha1.StepStatus{
			{Name: "fetch", Phase: schedulerv1alpha1.StepSucceeded, Attempts: 1, Output: map[string]string{"path": "/work/src"}},
			{Name: "analyze", Phase: schedulerv1alpha1.StepRunning, Attempts: 1, TaskName: w.Name + "-analyze"},
		}
	},
	checkStatus: func(t *testing.T, w *workflow) {
		assert.Equal(t, schedulerv1alpha1.WorkflowRunning, w.Status.Phase)
		assert.Equal(t, int32(1), w.Status.CurrentStep)
		require.Len(t, w.Status.StepStatuses, 2)
		assert.Equal(t, map[string]string{"path": "/work/src"}, w.Status.StepStatuses[0].Output)
		assert.Equal(t, schedulerv1alpha1.StepRunning, w.Status.StepStatuses[1].Phase)
	},
	applySpec: func(ns, name string) *schedulerac.WorkflowApplyConfiguration {
		return schedulerac.Workflow(name, ns).WithSpec(schedulerac.WorkflowSpec().
			WithUserID("alice").WithInput(map[string]string{"TOPIC": "testing"}).
			WithSteps(
				schedulerac.WorkflowStep().WithName("research").WithImage("ghcr.io/opsnorth/agents/research:1.1.0").
					WithInput(map[string]string{"QUERY": "${inputs.TOPIC}"}),
				schedulerac.WorkflowStep().WithName("write").WithImage("ghcr.io/opsnorth/agents/write:1.1.0").
					WithDependsOn("research").WithRetries(schedulerac.RetryPolicy().WithLimit(3)),
			))
	},
	checkAppliedSpec: func(t *testing.T, w *workflow) {
		require.Len(t, w.Spec.Steps, 2)
		assert.Equal(t, "${inputs.TOPIC}", w.Spec.Steps[0].Input["QUERY"])
		assert.Equal(t, []string{"research"}, w.Spec.Steps[1].DependsOn)
		assert.Equal(t, &schedulerv1alpha1.RetryPolicy{Limit: 3, BackoffSeconds: ptr.To[int32](5), MaxBackoffSeconds: ptr.To[int32](300)},
			w.Spec.Steps[1].Retries, "retries with their defaults")
	},
	applyStatus: func(ns, name string) *schedulerac.WorkflowApplyConfiguration {
		return schedulerac.Workflow(name, ns).WithStatus(schedulerac.WorkflowStatus().
			WithPhase(schedulerv1alpha1.WorkflowSucceeded).WithCurrentStep(2).WithDuration("1m30s").
			WithStepStatuses(
				schedulerac.StepStatus().WithName("research").WithPhase(schedulerv1alpha1.StepSucceeded),
				schedulerac.StepStatus().WithName("write").WithPhase(schedulerv1alpha1.StepSucceeded),
			).
			WithWebhook(schedulerac.WebhookDelivery().WithAttempts(1).WithDelivered(true).WithLastStatusCode(204)))
	},
	checkAppliedStatus: func(t *testing.T, w *workflow) {
		assert.Equal(t, schedulerv1alpha1.WorkflowSucceeded, w.Status.Phase)
		assert.Equal(t, "1m30s", w.Status.Duration)
		assert.Len(t, w.Status.StepStatuses, 2)
		require.NotNil(t, w.Status.Webhook)
		assert.True(t, w.Status.Webhook.Delivered)
		assert.Equal(t, int32(204), w.Status.Webhook.LastStatusCode)
	},
}

var userDeploymentFixture = kindFixture[*userDeployment, *schedulerv1alpha1.UserDeploymentList, *schedulerac.UserDeploymentApplyConfiguration]{
	client: func(cs versioned.Interface, ns string) typedClient[*userDeployment, *schedulerv1alpha1.UserDeploymentList, *schedulerac.UserDeploymentApplyConfiguration] {
		return cs.SchedulerV1alpha1().UserDeployments(ns)
	},
	lister: func(f externalversions.SharedInformerFactory, ns string) func(string) (*userDeployment, error) {
		return f.Scheduler().V1alpha1().UserDeployments().Lister().UserDeployments(ns).Get
	},
	names: func(l *schedulerv1alpha1.UserDeploymentList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: validUserDeployment,
	spec:      func(u *userDeployment) any { return u.Spec },
	setStatus: func(u *userDeployment) {
		u.Status.Phase = schedulerv1alpha1.PhaseProvisioning
		u.Status.Namespace = "user-" + u.Spec.UserID
		u.Status.Conditions = []metav1.Condition{condition(schedulerv1alpha1.ConditionReconciling, "Provisioning")}
	},
	checkStatus: func(t *testing.T, u *userDeployment) {
		assert.Equal(t, schedulerv1alpha1.PhaseProvisioning, u.Status.Phase)
		assert.Equal(t, "user-alice", u.Status.Namespace)
		require.Len(t, u.Status.Conditions, 1)
		assert.Equal(t, "Provisioning", u.Status.Conditions[0].Reason)
	},
	applySpec: func(ns, name string) *schedulerac.UserDeploymentApplyConfiguration {
		return schedulerac.UserDeployment(name, ns).WithSpec(schedulerac.UserDeploymentSpec().
			WithUserID("carol").WithImage("ghcr.io/opsnorth/hello:2.0.1").WithContainerPort(8080).
			WithConfigData(schedulerv1alpha1.EnvMap{"GREETING": "hi"}).
			WithAutoscaling(schedulerac.Autoscaling().WithMinReplicas(1).WithMaxReplicas(4)))
	},
	checkAppliedSpec: func(t *testing.T, u *userDeployment) {
		assert.Equal(t, "carol", u.Spec.UserID)
		assert.Equal(t, ptr.To[int32](8080), u.Spec.ContainerPort)
		assert.Equal(t, schedulerv1alpha1.EnvMap{"GREETING": "hi"}, u.Spec.ConfigData)
		assert.Equal(t, schedulerv1alpha1.DesiredRunning, u.Spec.DesiredState, "default")
		assert.Equal(t, schedulerv1alpha1.VisibilityPublic, u.Spec.Visibility, "default")
		assert.Equal(t, "free", u.Spec.Tier, "default")
		require.NotNil(t, u.Spec.Autoscaling)
		assert.Equal(t, int32(80), u.Spec.Autoscaling.TargetCPUUtilizationPercentage, "default")
	},
	applyStatus: func(ns, name string) *schedulerac.UserDeploymentApplyConfiguration {
		return schedulerac.UserDeployment(name, ns).WithStatus(schedulerac.UserDeploymentStatus().
			WithPhase(schedulerv1alpha1.PhaseReady).WithReadyReplicas(2).WithNamespace("user-carol").
			WithIngresses(schedulerac.IngressStatus().WithService("main").WithHost(name + ".apps.example.com").
				WithURL("https://" + name + ".apps.example.com").WithVisibility(schedulerv1alpha1.VisibilityPublic)).
			WithConditions(conditionApply(schedulerv1alpha1.ConditionReady, "Ready")))
	},
	checkAppliedStatus: func(t *testing.T, u *userDeployment) {
		assert.Equal(t, schedulerv1alpha1.PhaseReady, u.Status.Phase)
		assert.Equal(t, int32(2), u.Status.ReadyReplicas)
		require.Len(t, u.Status.Ingresses, 1)
		assert.Equal(t, "https://"+u.Name+".apps.example.com", u.Status.Ingresses[0].URL)
	},
}

var deploymentTemplateFixture = kindFixture[*deploymentTemplate, *schedulerv1alpha1.DeploymentTemplateList, *schedulerac.DeploymentTemplateApplyConfiguration]{
	client: func(cs versioned.Interface, _ string) typedClient[*deploymentTemplate, *schedulerv1alpha1.DeploymentTemplateList, *schedulerac.DeploymentTemplateApplyConfiguration] {
		return cs.SchedulerV1alpha1().DeploymentTemplates()
	},
	lister: func(f externalversions.SharedInformerFactory, _ string) func(string) (*deploymentTemplate, error) {
		return f.Scheduler().V1alpha1().DeploymentTemplates().Lister().Get
	},
	names: func(l *schedulerv1alpha1.DeploymentTemplateList) []string {
		var names []string
		for _, item := range l.Items {
			names = append(names, item.Name)
		}
		return names
	},
	newObject: func(_, name string) *deploymentTemplate { return validDeploymentTemplate(name) },
	spec:      func(d *deploymentTemplate) any { return d.Spec },
	setStatus: func(d *deploymentTemplate) {
		d.Status.ObservedGeneration = 1
		d.Status.Conditions = []metav1.Condition{condition(schedulerv1alpha1.ConditionReady, "Valid")}
	},
	checkStatus: func(t *testing.T, d *deploymentTemplate) {
		assert.Equal(t, int64(1), d.Status.ObservedGeneration)
		require.Len(t, d.Status.Conditions, 1)
		assert.Equal(t, "Valid", d.Status.Conditions[0].Reason)
	},
	applySpec: func(_, name string) *schedulerac.DeploymentTemplateApplyConfiguration {
		return schedulerac.DeploymentTemplate(name).WithSpec(schedulerac.DeploymentTemplateSpec().
			WithDescription("applied").
			WithServices(schedulerac.TemplateService().WithName("site").WithImage("nginxinc/nginx-unprivileged:1.27-alpine").
				WithPorts(schedulerac.ServicePort().WithName("http").WithPort(8080)).WithExpose("http")))
	},
	checkAppliedSpec: func(t *testing.T, d *deploymentTemplate) {
		assert.Equal(t, "applied", d.Spec.Description)
		require.Len(t, d.Spec.Services, 1)
		s := d.Spec.Services[0]
		assert.Equal(t, "http", s.Expose)
		assert.Equal(t, schedulerv1alpha1.ServiceType("ClusterIP"), s.ServiceType, "default")
		assert.Equal(t, ptr.To[int32](1), s.Replicas, "default")
		require.Len(t, s.Ports, 1)
		assert.Equal(t, "TCP", string(s.Ports[0].Protocol), "default")
	},
	applyStatus: func(_, name string) *schedulerac.DeploymentTemplateApplyConfiguration {
		return schedulerac.DeploymentTemplate(name).WithStatus(schedulerac.DeploymentTemplateStatus().
			WithObservedGeneration(1).WithConditions(conditionApply(schedulerv1alpha1.ConditionReady, "Applied")))
	},
	checkAppliedStatus: func(t *testing.T, d *deploymentTemplate) {
		require.Len(t, d.Status.Conditions, 1)
		assert.Equal(t, "Applied", d.Status.Conditions[0].Reason)
	},
}

// TestGeneratedClients drives every kind through the generated clientset,
// applyconfigurations, informers, listers and watch.
