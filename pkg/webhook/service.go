package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tenancy"
)

// Delivery is one object's due completion webhook, read from the API server.
type Delivery struct {
	// Object is the AgentTask or Workflow; Events are about it.
	Object client.Object
	// URL of the receiver.
	URL string
	// SecretRef names the signing key in the object's namespace; nil sends unsigned.
	SecretRef *v1alpha1.SecretKeyReference
	// UserID is the object's user: the signing Secret must be labelled for
	// that user or for sharing (tenancy.MayUse).
	UserID string
	// Body is the payload, the same bytes on every attempt.
	Body []byte
	// IdempotencyKey is the same on every attempt and after restarts.
	IdempotencyKey string
	// State is the delivery as recorded in the object's status.
	State *v1alpha1.WebhookDelivery
}

// Subject adapts one kind to the Service.
type Subject interface {
	// Load reads the object from the API server, never a cache, so an
	// attempt recorded a moment ago is seen, and returns its delivery; nil
	// when none is due (gone, not terminal, delivered or given up).
	Load(ctx context.Context, key types.NamespacedName) (*Delivery, error)
	// Record writes state into the object's status with the WebhookDelivered
	// condition, guarded by the version Load read.
	Record(ctx context.Context, d *Delivery, state *v1alpha1.WebhookDelivery) error
}

// Options configure a Service.
type Options struct {
	Config
	// Kind names the delivered kind in metrics and logs, e.g. "AgentTask".
	Kind string
	// Event is the X-Opsnorth-Event header, e.g. "agenttask.completed".
	Event string
	// Secrets reads signing keys; uncached, so no Secret is watched.
	Secrets  client.Reader
	Recorder events.EventRecorder
	Subject  Subject
	Now      func() time.Time
}

// item is one queued delivery: its object and its receiver's host.
type item struct {
	key  types.NamespacedName
	host string
}

// Service delivers completion webhooks on a bounded pool of its own, never
// on a reconcile worker: a reconcile calls Schedule and returns. Attempts
// are recorded in the object's status, so after a restart or a leader
// change the next leader's reconciles schedule what is still due.
type Service struct {
	opts   Options
	sender *Sender
	queue  workqueue.TypedRateLimitingInterface[item]
	gate   *gate
}

// NewService returns a Service; Start runs it.
func NewService(opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	registerMetrics()
	return &Service{
		opts:   opts,
		sender: NewSender(opts.Guard, opts.Timeout, opts.UserAgent),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[item](500*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[item]{Name: "webhook-" + opts.Kind}),
		gate: newGate(max(opts.MaxPerHost, 1)),
	}
}

// Schedule queues the delivery of key's webhook for when state says the
// next attempt is due. Scheduling a queued delivery again keeps the earlier time.
func (s *Service) Schedule(key types.NamespacedName, receiver string, state *v1alpha1.WebhookDelivery) {
	it := item{key: key, host: hostOf(receiver)}
	if wait := s.opts.Policy.Next(state, s.opts.Now()); wait > 0 {
		s.queue.AddAfter(it, wait)
		return
	}
	s.queue.Add(it)
}

// NeedLeaderElection reports true: only the leader delivers.
func (s *Service) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx ends; an attempt under way finishes.
func (s *Service) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range max(s.opts.Workers, 1) {
		wg.Go(func() {
			for s.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	s.queue.ShutDown()
	wg.Wait()
	return nil
}

func (s *Service) next(ctx context.Context) bool {
	it, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(it)
	if !s.gate.acquire(it) {
		parked.WithLabelValues(s.opts.Kind).Set(float64(s.gate.parkedCount()))
		return true
	}
	defer func() {
		if next, ok := s.gate.release(it.host); ok {
			s.queue.Add(next)
		}
		parked.WithLabelValues(s.opts.Kind).Set(float64(s.gate.parkedCount()))
	}()
	log := logf.FromContext(ctx).WithValues("kind", s.opts.Kind, "namespace", it.key.Namespace, "name", it.key.Name)
	ctx = logf.IntoContext(ctx, log)
	after, err := s.attempt(ctx, it.key)
	switch {
	case ctx.Err() != nil:
		// Shutting down: the next leader sends what was not recorded.
	case err != nil:
		log.Error(err, "completion webhook")
		s.queue.AddRateLimited(it)
	case after > 0:
		s.queue.Forget(it)
		s.queue.AddAfter(it, after)
	default:
		s.queue.Forget(it)
	}
	return true
}

// attempt makes one attempt when one is due and records it. It returns
// when the next is due: zero when none is.
func (s *Service) attempt(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	d, err := s.opts.Subject.Load(ctx, key)
	if err != nil || d == nil || !Pending(d.State) {
		return 0, err
	}
	if wait := s.opts.Policy.Next(d.State, s.opts.Now()); wait > 0 {
		return wait, nil
	}
	res, err := s.send(ctx, d)
	if err != nil || ctx.Err() != nil {
		return 0, err
	}
	state := s.opts.Policy.Record(d.State, res, s.opts.Now())
	if err := s.opts.Subject.Record(ctx, d, state); err != nil {
		// Sent but not recorded: the next attempt sends the same body
		// with the same idempotency key.
		return 0, fmt.Errorf("record attempt %d: %w", state.Attempts, err)
	}
	s.report(ctx, d, res, state)
	if !Pending(state) {
		return 0, nil
	}
	return max(s.opts.Policy.Next(state, s.opts.Now()), time.Second), nil
}

// send signs and posts d. A signing key that cannot be read or used is a
// failed attempt that sends nothing: a webhook with a secret is never sent
// unsigned. The attempt's webhook-timestamp is the service's clock now.
func (s *Service) send(ctx context.Context, d *Delivery) (Result, error) {
	req := Request{URL: d.URL, Body: d.Body, IdempotencyKey: d.IdempotencyKey, Event: s.opts.Event}
	if d.SecretRef != nil {
		key, err := readSecret(ctx, s.opts.Secrets, d.Object.GetNamespace(), d.SecretRef, d.UserID)
		if errors.Is(err, ErrSecret) {
			return Result{Err: err}, nil
		}
		if err != nil {
			return Result{}, err
		}
		req.Key = key
	}
	inFlight.WithLabelValues(s.opts.Kind).Inc()
	defer inFlight.WithLabelValues(s.opts.Kind).Dec()
	start := time.Now()
	req.Timestamp = s.opts.Now()
	res := s.sender.Send(ctx, req)
	attemptDuration.WithLabelValues(s.opts.Kind).Observe(time.Since(start).Seconds())
	return res, nil
}

// report counts the attempt, logs it and emits its Event.
func (s *Service) report(ctx context.Context, d *Delivery, res Result, state *v1alpha1.WebhookDelivery) {
	deliveries.WithLabelValues(s.opts.Kind, resultLabel(res)).Inc()
	log := logf.FromContext(ctx).WithValues("attempts", state.Attempts, "statusCode", state.LastStatusCode)
	if state.Delivered {
		log.Info("completion webhook delivered")
		s.event(d, "Normal", "WebhookDelivered", fmt.Sprintf("completion webhook delivered after %d attempt(s)", state.Attempts))
		return
	}
	log.Info("completion webhook attempt failed", "gaveUp", state.GaveUp, "error", state.LastError)
	if state.GaveUp {
		gaveUp.WithLabelValues(s.opts.Kind).Inc()
		s.event(d, "Warning", "WebhookGaveUp",
			fmt.Sprintf("gave up the completion webhook after %d attempt(s): %s", state.Attempts, state.LastError))
		return
	}
	s.event(d, "Warning", "WebhookFailed", fmt.Sprintf("completion webhook attempt %d of %d failed: %s",
		state.Attempts, s.opts.Policy.MaxAttempts, state.LastError))
}

// maxEventNote is the longest note an events.k8s.io Event accepts.
const maxEventNote = 1024

func (s *Service) event(d *Delivery, eventType, reason, note string) {
	s.opts.Recorder.Eventf(d.Object, nil, eventType, reason, "DeliverWebhook", "%s", truncate(note, maxEventNote))
}

// ErrSecret marks a signing key that cannot be used: no Secret, no key, an
// empty key, a "whsec_" value that is not valid base64, a Secret not
// labelled for the object's user, or no permission to read it. Creating or
// fixing it heals the delivery's next attempt.
var ErrSecret = errors.New("webhook signing secret unusable")

// readSecret reads userID's signing key with an uncached GET and returns its
// HMAC key (ParseSecret). Errors name the Secret and its key, never the value.
func readSecret(ctx context.Context, r client.Reader, namespace string, ref *v1alpha1.SecretKeyReference, userID string) ([]byte, error) {
	var secret corev1.Secret
	err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &secret)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		return nil, fmt.Errorf("%w: read webhook secret %s/%s: %w", ErrSecret, namespace, ref.Name, err)
	case err != nil:
		return nil, fmt.Errorf("read webhook secret %s/%s: %w", namespace, ref.Name, err)
	}
	use := tenancy.Ref{Field: "spec.webhookSecretRef", Kind: "Secret", Name: ref.Name}
	if err := tenancy.CheckUse(use, namespace, &secret, userID); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSecret, err)
	}
	value, ok := secret.Data[ref.Key]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: webhook secret %s/%s has no key %q", ErrSecret, namespace, ref.Name, ref.Key)
	case len(value) == 0:
		return nil, fmt.Errorf("%w: key %q of webhook secret %s/%s is empty", ErrSecret, ref.Key, namespace, ref.Name)
	}
	key, err := ParseSecret(value)
	var invalid *secretError
	switch {
	case errors.As(err, &invalid):
		// What is wrong (not valid base64 after whsec_...), never the value.
		return nil, fmt.Errorf("%w: key %q of webhook secret %s/%s is %s", ErrSecret, ref.Key, namespace, ref.Name, invalid.reason)
	case err != nil:
		return nil, fmt.Errorf("%w: key %q of webhook secret %s/%s is invalid", ErrSecret, ref.Key, namespace, ref.Name)
	}
	return key, nil
}

// hostOf is the host (and port) a receiver URL dials, the unit of MaxPerHost.
func hostOf(receiver string) string {
	u, err := url.Parse(receiver)
	if err != nil {
		return receiver
	}
	return u.Host
}
