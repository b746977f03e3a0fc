package plugin

import (
	"encoding/json"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// Values of -o.
const (
	outputJSON = "json"
	outputYAML = "yaml"
)

func validOutput(format string) error {
	switch format {
	case "", outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("-o must be json or yaml, not %q", format)
}

// printObjects writes objs for scripts: one object as itself, several as a
// v1 List, without managedFields (as kubectl get does).
func printObjects(w io.Writer, format string, objs []runtime.Object) error {
	items := make([]runtime.Object, 0, len(objs))
	for _, obj := range objs {
		obj = obj.DeepCopyObject()
		if err := withKind(obj); err != nil {
			return err
		}
		items = append(items, obj)
	}
	var doc any = items[0]
	if len(items) > 1 {
		doc = map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	}
	var out []byte
	var err error
	if format == outputYAML {
		out, err = yaml.Marshal(doc)
	} else {
		out, err = json.MarshalIndent(doc, "", "    ")
		out = append(out, '\n')
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", format, err)
	}
	_, err = w.Write(out)
	return err
}

// withKind fills in apiVersion and kind, which typed clients leave empty,
// and drops managedFields.
func withKind(obj runtime.Object) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	accessor.SetManagedFields(nil)
	var kind string
	switch obj.(type) {
	case *v1alpha1.Workflow:
		kind = "Workflow"
	case *v1alpha1.AgentTask:
		kind = "AgentTask"
	case *v1alpha1.UserDeployment:
		kind = "UserDeployment"
	default:
		return fmt.Errorf("cannot print %T", obj)
	}
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kind))
	return nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
