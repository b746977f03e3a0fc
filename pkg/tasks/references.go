package tasks

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tenancy"
)

// ReasonReferenceNotAllowed fails a task that names an object of the shared
// task namespace that its user may not use.
const ReasonReferenceNotAllowed = "ReferenceNotAllowed"

// ReasonSecretNotFound keeps a task Pending whose image pull Secret does
// not exist (yet).
const ReasonSecretNotFound = "SecretNotFound"

// missingSecretPoll is how often a task waiting for a missing image pull
// Secret looks again.
const missingSecretPoll = 5 * time.Second

// reference is one object a task's spec names, and whether it must exist
// before the Job does.
type reference struct {
	tenancy.Ref
	// mayBeMissing: a missing object is checked again when it is used.
	mayBeMissing bool
}

// references lists the ServiceAccount and Secrets the task names. A
// missing webhook signing Secret is allowed here: the delivery reads it,
// labels included, on every attempt, so creating it later heals the
// webhook. A missing ServiceAccount or pull Secret would leave the pod
// uncreated or the image unpulled, so the task waits for it.
func references(task *v1alpha1.AgentTask) []reference {
	var refs []reference
	if name := task.Spec.ServiceAccountName; name != "" {
		refs = append(refs, reference{Ref: tenancy.Ref{Field: "spec.serviceAccountName", Kind: "ServiceAccount", Name: name}})
	}
	for i, name := range task.Spec.ImagePullSecrets {
		refs = append(refs, reference{Ref: tenancy.Ref{Field: fmt.Sprintf("spec.imagePullSecrets[%d]", i), Kind: "Secret", Name: name}})
	}
	if ref := task.Spec.WebhookSecretRef; ref != nil {
		refs = append(refs, reference{Ref: tenancy.Ref{Field: "spec.webhookSecretRef", Kind: "Secret", Name: ref.Name}, mayBeMissing: true})
	}
	return refs
}

// referenceProblem is why a task may not have its Job yet: an object it
// names is missing (it may be created later: Missing) or is not labelled for
// the task's user (only the user can fix the task).
type referenceProblem struct {
	Missing bool
	Kind    string
	Message string
}

// checkReferences returns the problem with the first object the task names
// that is missing or not labelled for its user or for sharing, nil for
// none; err is a failed read, to retry. Only metadata is read (never a
// Secret's data), uncached, before the Job is created; a task that names
// nothing costs no read.
func (r *Reconciler) checkReferences(ctx context.Context, task *v1alpha1.AgentTask) (*referenceProblem, error) {
	for _, ref := range references(task) {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
		err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: task.Namespace, Name: ref.Name}, obj)
		switch {
		case apierrors.IsNotFound(err) && ref.mayBeMissing:
			continue
		case apierrors.IsNotFound(err):
			return &referenceProblem{Missing: true, Kind: ref.Kind,
				Message: fmt.Sprintf("%s: %s %s/%s not found", ref.Field, ref.Kind, task.Namespace, ref.Name)}, nil
		case err != nil:
			return nil, errorf(errAPIRead, "get %s %s/%s: %w", ref.Kind, task.Namespace, ref.Name, err)
		}
		if err := tenancy.CheckUse(ref.Ref, task.Namespace, obj, task.Spec.UserID); err != nil {
			return &referenceProblem{Kind: ref.Kind, Message: err.Error()}, nil
		}
	}
	return nil, nil
}
