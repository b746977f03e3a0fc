package tasks

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/refusal"
	"opsnorth.io/scheduler/pkg/tenancy"
)

// ReasonReferenceNotAllowed fails a task that names an object of the shared
// task namespace that its user may not use.
const ReasonReferenceNotAllowed = "ReferenceNotAllowed"

// Reasons that keep a task Pending, without a Job, until what its spec
// names is there or the start timeout fails it with the same reason.
const (
	// ReasonSecretNotFound: an image pull Secret, or a Secret env or
	// envFrom reads, does not exist (yet).
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretKeyNotFound: a Secret that env reads has no key of the
	// name env gives.
	ReasonSecretKeyNotFound = "SecretKeyNotFound"
	// ReasonSecretKeyRefused: a key of a Secret that envFrom reads would
	// make (with the prefix) an environment variable the rules of input
	// keys refuse, or one the input or env sets already.
	ReasonSecretKeyRefused = "SecretKeyRefused"
	// ReasonQueueNotFound: the Kueue LocalQueue queueName names does not
	// exist (yet), or Kueue is not installed.
	ReasonQueueNotFound = "QueueNotFound"
)

// localQueueVersions are the Kueue API versions a LocalQueue is read in,
// newest first: v1beta2 since Kueue 0.15, v1beta1 before.
var localQueueVersions = []schema.GroupVersion{
	{Group: "kueue.x-k8s.io", Version: "v1beta2"}, {Group: "kueue.x-k8s.io", Version: "v1beta1"},
}

// missingSecretPoll is how often a task waiting for a Secret (or for a
// Secret's keys to be right) looks again; Secrets are not watched.
const missingSecretPoll = 5 * time.Second

// reference is one object a task's spec names, and whether it must exist
// before the Job does.
type reference struct {
	tenancy.Ref
	// mayBeMissing: a missing object is checked again when it is used.
	mayBeMissing bool
}

// references lists the ServiceAccount, Secrets and LocalQueue the task names. A
// missing webhook signing Secret is allowed here: the delivery reads it,
// labels included, on every attempt, so creating it later heals the
// webhook. A missing ServiceAccount, pull Secret or Secret of env or
// envFrom would leave the pod uncreated, the image unpulled or the agent
// unstarted, so the task waits for it. A Secret that env or envFrom names
// after a pull Secret, env or envFrom did is listed once, with the first
// field; a webhook signing Secret that they name must exist too. A LocalQueue
// must exist and be the user's or shared like the rest: a Job in a queue
// nobody admits would wait for ever, and a user's tasks must not spend
// another's quota.
func references(task *v1alpha1.AgentTask) []reference {
	var refs []reference
	if name := task.Spec.ServiceAccountName; name != "" {
		refs = append(refs, reference{Ref: tenancy.Ref{Field: "spec.serviceAccountName", Kind: "ServiceAccount", Name: name}})
	}
	if name := task.Spec.QueueName; name != "" {
		refs = append(refs, reference{Ref: tenancy.Ref{Field: "spec.queueName", Kind: "LocalQueue", Name: name}})
	}
	required := map[string]bool{}
	secret := func(field, name string) {
		if !required[name] {
			required[name] = true
			refs = append(refs, reference{Ref: tenancy.Ref{Field: field, Kind: "Secret", Name: name}})
		}
	}
	for i, name := range task.Spec.ImagePullSecrets {
		refs = append(refs, reference{Ref: tenancy.Ref{Field: fmt.Sprintf("spec.imagePullSecrets[%d]", i), Kind: "Secret", Name: name}})
		required[name] = true
	}
	for i, e := range task.Spec.Env {
		secret(fmt.Sprintf("spec.env[%d].valueFrom.secretKeyRef.name", i), e.ValueFrom.SecretKeyRef.Name)
	}
	for i, f := range task.Spec.EnvFrom {
		secret(fmt.Sprintf("spec.envFrom[%d].secretRef.name", i), f.SecretRef.Name)
	}
	if ref := task.Spec.WebhookSecretRef; ref != nil && !required[ref.Name] {
		refs = append(refs, reference{Ref: tenancy.Ref{Field: "spec.webhookSecretRef", Kind: "Secret", Name: ref.Name}, mayBeMissing: true})
	}
	return refs
}

// referenceProblem is why a task may not have its Job yet: an object it
// names is missing or not as the task needs it (it may be created or
// changed later: Wait), or is not labelled for the task's user (only the
// user can fix the task: it fails).
type referenceProblem struct {
	// Reason is the status reason.
	Reason string
	// Wait keeps the task Pending, since the object may yet be created or
	// changed; without it the task fails.
	Wait bool
	// Kind is the named object's: a ServiceAccount's creation is watched,
	// Secrets are polled.
	Kind string
	// Message names the field and the object, never a Secret's value.
	Message string
}

// missing is the problem of ref's object not existing in namespace.
func missing(ref tenancy.Ref, namespace string) *referenceProblem {
	reason := ReasonSecretNotFound
	switch ref.Kind {
	case "ServiceAccount":
		reason = refusal.ReasonServiceAccountNotFound
	case "LocalQueue":
		reason = ReasonQueueNotFound
	}
	return &referenceProblem{Reason: reason, Wait: true, Kind: ref.Kind,
		Message: fmt.Sprintf("%s: %s %s/%s not found", ref.Field, ref.Kind, namespace, ref.Name)}
}

// notAllowed is the problem of an object the user may not use (err from
// tenancy.CheckUse).
func notAllowed(err error) *referenceProblem {
	return &referenceProblem{Reason: ReasonReferenceNotAllowed, Message: err.Error()}
}

// checkReferences returns the problem with the first object the task names
// that is missing or not labelled for its user or for sharing, nil for
// none; err is a failed read, to retry. Only metadata is read (never a
// Secret's data), uncached, before the Job is created; a task that names
// nothing costs no read. The keys of the Secrets env and envFrom read are
// checked after, by checkSecretKeys, once the Secrets are known allowed.
func (r *Reconciler) checkReferences(ctx context.Context, task *v1alpha1.AgentTask) (*referenceProblem, error) {
	for _, ref := range references(task) {
		obj, err := r.readMetadata(ctx, ref.Ref, task.Namespace)
		switch {
		case meta.IsNoMatchError(err):
			p := missing(ref.Ref, task.Namespace)
			p.Message = fmt.Sprintf("%s: the API server serves no %s (kueue.x-k8s.io): is Kueue installed?", ref.Field, ref.Kind)
			return p, nil
		case apierrors.IsNotFound(err) && ref.mayBeMissing:
			continue
		case apierrors.IsNotFound(err):
			return missing(ref.Ref, task.Namespace), nil
		case err != nil:
			return nil, errorf(errAPIRead, "get %s %s/%s: %w", ref.Kind, task.Namespace, ref.Name, err)
		}
		if err := tenancy.CheckUse(ref.Ref, task.Namespace, obj, task.Spec.UserID); err != nil {
			return notAllowed(err), nil
		}
	}
	return nil, nil
}

// readMetadata reads the metadata of the object ref names in namespace,
// uncached. A LocalQueue is read in the newest Kueue version served.
func (r *Reconciler) readMetadata(ctx context.Context, ref tenancy.Ref, namespace string) (*metav1.PartialObjectMetadata, error) {
	versions := []schema.GroupVersion{corev1.SchemeGroupVersion}
	if ref.Kind == "LocalQueue" {
		versions = localQueueVersions
	}
	var err error
	for _, gv := range versions {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gv.WithKind(ref.Kind))
		if err = r.apiReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, obj); !meta.IsNoMatchError(err) {
			return obj, err
		}
	}
	return nil, err
}
