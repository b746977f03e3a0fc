package integration

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
)

// mutableCase is an update of a valid object the apiserver must accept.
type mutableCase struct {
	name   string
	obj    objectFactory
	update func(runtime.Object)
	// before is an update that must pass first, as in invalidCase.
	before func(runtime.Object)
}

// TestValidationAllowsMutableUpdates checks the immutability rules freeze only
// what they claim: a UserDeployment's spec apart from userId, an AgentTask's
// cancel and a template's spec change, with a new generation.
func TestValidationAllowsMutableUpdates(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)

	tests := append([]mutableCase{
		{
			name: "userdeployment stopped and scaled by hand",
			obj:  newUserDeployment(nil),
			update: as(func(u *userDeployment) {
				u.Spec.DesiredState, u.Spec.Autoscaling, u.Spec.Replicas = schedulerv1alpha1.DesiredStopped, nil, ptr.To[int32](0)
			}),
		},
		{
			name:   "userdeployment moved to another template",
			obj:    newUserDeployment(nil),
			update: as(func(u *userDeployment) { u.Spec.Template = "static-site" }),
		},
		{
			name:   "agenttask cancelled",
			obj:    newAgentTask(nil),
			update: as(func(a *agentTask) { a.Spec.Cancel = true }),
		},
		{
			name:   "template with a new image",
			obj:    newDeploymentTemplate(nil),
			update: as(func(d *deploymentTemplate) { d.Spec.Services[0].Image = "ghcr.io/opsnorth/web-app:1.5.0" }),
		},
	}, workflowControlUpdates()...)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			obj := tc.obj(validationNamespace, uniqueName(fmt.Sprintf("mutable-%02d", i)))
			u := toUnstructured(t, obj)
			rc := resourceClient(t, dc, u)
			created, err := rc.Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err)
			deleteOnCleanup(t, rc, u.GetName())
			if tc.before != nil {
				prior := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
				fromUnstructured(t, created, prior)
				tc.before(prior)
				created, err = rc.Update(ctx, toUnstructured(t, prior), metav1.UpdateOptions{})
				require.NoError(t, err, "the first update of the case must be valid")
			}

			typed := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
			fromUnstructured(t, created, typed)
			tc.update(typed)
			changed := toUnstructured(t, typed)
			updated, err := rc.Update(ctx, changed, metav1.UpdateOptions{})
			require.NoError(t, err)
			assert.Equal(t, changed.Object["spec"], updated.Object["spec"])
			assert.Equal(t, created.GetGeneration()+1, updated.GetGeneration())
		})
	}
}
