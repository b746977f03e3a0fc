package workflows_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/webhook/webhooktest"
	"opsnorth.io/scheduler/pkg/workflows"
)

// TestWebhookConformance runs the delivery suite every kind passes.
func TestWebhookConformance(t *testing.T) {
	webhooktest.Run(t, workflowKind{k: newCluster(t)})
}

// workflowKind drives Workflows for the conformance suite: each is one
// step whose task the test finishes, playing the tasks manager.
type workflowKind struct{ k *cluster }

func (workflowKind) Name() string                 { return "Workflow" }
func (workflowKind) Event() string                { return workflows.WebhookEvent }
func (a workflowKind) Namespace() string          { return a.k.ns }
func (a workflowKind) Kube() kubernetes.Interface { return a.k.kube }

func (a workflowKind) Start(t *testing.T, s webhooktest.Settings) func() {
	m := startManager(t, a.k.ns, s.Args()...)
	return func() { m.Stop(t) }
}

func (a workflowKind) Finish(_ *testing.T, name, url string, secret *v1alpha1.SecretKeyReference) {
	wf := stepWorkflow(name, step("a", nil))
	wf.Spec.WebhookURL, wf.Spec.WebhookSecretRef = url, secret
	a.k.create(wf)
	a.k.finish(a.k.waitTask(name, "a", 0), v1alpha1.TaskSucceeded, nil)
}

func (a workflowKind) Observe(name string) (webhooktest.Observed, error) {
	wf, err := a.k.cs.SchedulerV1alpha1().Workflows(a.k.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return webhooktest.Observed{}, err
	}
	return webhooktest.Observed{UID: wf.UID, Webhook: wf.Status.Webhook, Conditions: wf.Status.Conditions}, nil
}
