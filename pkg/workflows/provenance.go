package workflows

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// A step task proves it was created by the workflows manager with an HMAC
// of its workflow's UID, its name and its spec, under a key only the
// manager reads (StepKeySecret in its own namespace). Anyone who may create
// AgentTasks can copy a workflow's ownerReference and a step's name; no one
// else can sign, so a forged task is never taken for a step, even where the
// shipped admission policy is not installed. The signature also pins the
// spec: a signed task whose spec was changed is not the step either.
const (
	// StepKeySecret names the Secret that holds the key, under StepKeyField.
	StepKeySecret = "opsnorth-scheduler-workflows-step-key"
	// StepKeyField is the Secret's data key.
	StepKeyField = "key"
	// AnnotationStepSignature carries a step task's signature.
	AnnotationStepSignature = labelkeys.Prefix + "step-signature"
)

const stepKeyBytes = 32

// stepSigner signs and verifies step tasks.
type stepSigner struct {
	key []byte
	// since is when the key was made: an unsigned task created before it
	// dates from a manager that did not sign yet and is trusted.
	since time.Time
}

// loadStepSigner reads the key from namespace, creating it on first start.
func loadStepSigner(ctx context.Context, cs kubernetes.Interface, namespace string) (*stepSigner, error) {
	secrets := cs.CoreV1().Secrets(namespace)
	for range 2 {
		s, err := secrets.Get(ctx, StepKeySecret, metav1.GetOptions{})
		if err == nil {
			key := s.Data[StepKeyField]
			if len(key) < stepKeyBytes {
				return nil, fmt.Errorf("secret %s/%s: %s holds %d bytes, want at least %d", namespace, StepKeySecret, StepKeyField, len(key), stepKeyBytes)
			}
			return &stepSigner{key: key, since: s.CreationTimestamp.Time}, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("read the step key %s/%s: %w", namespace, StepKeySecret, err)
		}
		key := make([]byte, stepKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("make the step key: %w", err)
		}
		_, err = secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: StepKeySecret, Namespace: namespace,
				Labels: map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.PartOf: labelkeys.PartOfValue}},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{StepKeyField: key},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create the step key %s/%s: %w", namespace, StepKeySecret, err)
		}
		// Created, by this replica or another: read back the one that won.
	}
	return nil, fmt.Errorf("the step key %s/%s was created but cannot be read", namespace, StepKeySecret)
}

func (s *stepSigner) signature(wf *v1alpha1.Workflow, task *v1alpha1.AgentTask) string {
	spec, _ := json.Marshal(&task.Spec) // plain data: cannot fail
	mac := hmac.New(sha256.New, s.key)
	_, _ = fmt.Fprintf(mac, "%s\n%s\n%s\n", wf.UID, task.Name, spec) // a hash.Hash never fails to write
	return hex.EncodeToString(mac.Sum(nil))
}

// sign stamps task, which wf owns, with its signature.
func (s *stepSigner) sign(wf *v1alpha1.Workflow, task *v1alpha1.AgentTask) {
	if task.Annotations == nil {
		task.Annotations = map[string]string{}
	}
	task.Annotations[AnnotationStepSignature] = s.signature(wf, task)
}

// isStep reports whether task is one of wf's steps: wf is its controller
// and it carries the manager's signature (or predates signing).
func (s *stepSigner) isStep(task *v1alpha1.AgentTask, wf *v1alpha1.Workflow) bool {
	if !isStepOf(task, wf) {
		return false
	}
	got, ok := task.Annotations[AnnotationStepSignature]
	if !ok {
		return task.CreationTimestamp.Time.Before(s.since)
	}
	return hmac.Equal([]byte(got), []byte(s.signature(wf, task)))
}
