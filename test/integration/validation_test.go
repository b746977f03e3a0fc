package integration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
)

// validationNamespace holds the objects of the validation tests.
const validationNamespace = "it-validation"

type (
	agentTask          = schedulerv1alpha1.AgentTask
	workflow           = schedulerv1alpha1.Workflow
	userDeployment     = schedulerv1alpha1.UserDeployment
	deploymentTemplate = schedulerv1alpha1.DeploymentTemplate
)

// objectFactory builds a typed object in namespace ns named name.
type objectFactory func(ns, name string) runtime.Object

// build returns a factory of base(ns, name) changed by mutate.
func build[T runtime.Object](base func(ns, name string) T, mutate func(T)) objectFactory {
	return func(ns, name string) runtime.Object {
		obj := base(ns, name)
		if mutate != nil {
			mutate(obj)
		}
		return obj
	}
}

func newAgentTask(mutate func(*agentTask)) objectFactory { return build(validAgentTask, mutate) }
func newWorkflow(mutate func(*workflow)) objectFactory   { return build(validWorkflow, mutate) }
func newUserDeployment(mutate func(*userDeployment)) objectFactory {
	return build(validUserDeployment, mutate)
}
func newImageUserDeployment(mutate func(*userDeployment)) objectFactory {
	return build(validImageUserDeployment, mutate)
}
func newDeploymentTemplate(mutate func(*deploymentTemplate)) objectFactory {
	return build(func(_, name string) *deploymentTemplate { return validDeploymentTemplate(name) }, mutate)
}

// as adapts a typed mutation to any object.
func as[T runtime.Object](mutate func(T)) func(runtime.Object) {
	return func(obj runtime.Object) { mutate(obj.(T)) }
}

// invalidCase breaks exactly one rule of a valid base object.
type invalidCase struct {
	name string
	// obj builds the object to create.
	obj objectFactory
	// unset removes these dotted field paths from the request (required fields
	// cannot be left out through the typed structs).
	unset []string
	// update, when set, makes this an update case: obj is created unchanged,
	// then updated with this mutation, which must be refused.
	update func(runtime.Object)
	// before, in an update case, is an update that must pass first (what
	// only an update may set, such as a Workflow's approvals).
	before func(runtime.Object)
	// field is the path the apiserver reports the error at.
	field string
	// msg is part of the rule's message.
	msg string
}

var (
	tooLongName  = strings.Repeat("a", 64)
	dottedName   = "my.app"
	relativePath = "etc/app/settings.yaml"
)

func invalidCases() []invalidCase {
	return slices.Concat(invalidUserDeploymentCases(), invalidDeploymentTemplateCases(),
		invalidAgentTaskCases(), invalidAgentPodCases(), invalidSecretEnvCases(), invalidWorkflowCases(), invalidWorkflowControlCases())
}

// TestValidationBasesAreValid makes sure every invalid case starts from an
// object the apiserver accepts, so each refusal is due to its one mutation.
func TestValidationBasesAreValid(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)

	bases := map[string]objectFactory{
		"agenttask":            newAgentTask(nil),
		"workflow":             newWorkflow(nil),
		"userdeployment":       newUserDeployment(nil),
		"image userdeployment": newImageUserDeployment(nil),
		"deploymenttemplate":   newDeploymentTemplate(nil),
	}
	for name, base := range bases {
		t.Run(name, func(t *testing.T) {
			u := toUnstructured(t, base(validationNamespace, uniqueName("base")))
			_, err := resourceClient(t, dc, u).Create(t.Context(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			require.NoError(t, err)
		})
	}
}

// TestValidationRefusesInvalidObjects sends each invalid case and expects a
// 422 naming the field and the rule, with exactly one cause, and nothing stored.
func TestValidationRefusesInvalidObjects(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)

	cases := invalidCases()
	require.GreaterOrEqual(t, len(cases), 40)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			obj := tc.obj(validationNamespace, uniqueName(fmt.Sprintf("invalid-%03d", i)))
			u := toUnstructured(t, obj)
			for _, path := range tc.unset {
				fields := strings.Split(path, ".")
				_, found, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
				require.NoError(t, err)
				require.True(t, found, "%s is not set in the base object", path)
				unstructured.RemoveNestedField(u.Object, fields...)
			}
			rc := resourceClient(t, dc, u)

			if tc.update == nil {
				_, err := rc.Create(ctx, u, metav1.CreateOptions{})
				if err == nil {
					deleteOnCleanup(t, rc, u.GetName())
				}
				requireInvalid(t, err, tc.field, tc.msg)
				_, err = rc.Get(ctx, u.GetName(), metav1.GetOptions{})
				require.Truef(t, apierrors.IsNotFound(err), "a refused object must not be stored; get: %v", err)
				return
			}

			created, err := rc.Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err, "the base of an update case must be valid")
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
			require.NotEqual(t, created.Object["spec"], changed.Object["spec"], "the update must change the spec")

			_, err = rc.Update(ctx, changed, metav1.UpdateOptions{})
			requireInvalid(t, err, tc.field, tc.msg)
			stored, err := rc.Get(ctx, u.GetName(), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, created.GetResourceVersion(), stored.GetResourceVersion(), "a refused update must not be stored")
			assert.Equal(t, created.Object["spec"], stored.Object["spec"])
		})
	}
}

// objectRoot is the field the apiserver reports rules on the whole object at.
const objectRoot = "<nil>"

// skippedRulesNote is the cause the apiserver adds when a schema error (a
// missing, too long or unsupported value) kept it from running the CEL rules.
const skippedRulesNote = "some validation rules were not checked because the object was invalid"

// requireInvalid checks err is a 422 with exactly one cause besides the
// skipped-rules note, reported at field and carrying msg.
func requireInvalid(t *testing.T, err error, field, msg string) {
	t.Helper()
	require.Errorf(t, err, "the apiserver accepted an object that breaks the rule %q at %s", msg, field)
	require.Truef(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	require.Contains(t, err.Error(), field+": ", "the message must name the field")
	require.Contains(t, err.Error(), msg)
	var causes []metav1.StatusCause
	for _, c := range statusCauses(err) {
		if !strings.Contains(c.Message, skippedRulesNote) {
			causes = append(causes, c)
		}
	}
	require.Lenf(t, causes, 1, "the case must break exactly one rule; got: %v", err)
	assert.Equal(t, field, causes[0].Field, "field of the cause")
	assert.Contains(t, causes[0].Message, msg)
}
