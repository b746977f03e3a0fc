// Package tasks holds the tasks manager's AgentTask controller: each
// AgentTask runs as exactly one batch Job, its status tells the truth of the
// Job and pod, and a completion webhook reports the result.
//
// # Success from the pod
//
// A task's Job has one completion, no retries (backoffLimit 0) and a pod
// that never restarts (restartPolicy Never), so once that pod has
// Succeeded the Job can only complete: the Job controller marks it
// Complete on its next sync, about a second later (its pod-update batch
// period). The task does not wait for that second: it is Succeeded, with
// the agent's exit code and output, as soon as the pod shows it
// (agentSucceeded). Every workflow step would otherwise pay the second
// again.
//
// One Job rule can still fail a Job whose pod succeeded: its
// activeDeadlineSeconds (the task's timeout), which the Job controller
// checks against its own clock when it syncs, after the pod ended. So a
// pod is taken as the outcome only when its container finished a margin
// (deadlineMargin) before the deadline, counted from the Job's start
// (its creation while the Job has not recorded one: the start can only be
// later). Closer to the deadline, and for every failure, the task follows
// the Job's condition: the Job's pod failure rules and deadline decide
// what a failed or disrupted pod means. Should the Job controller be down
// past the deadline, its Job may later say DeadlineExceeded although the
// agent finished in time: the task keeps the agent's own outcome.
//
// The Job stays the pod's owner and cleans it up as before: a task that
// succeeded from its pod never deletes or changes its Job (stopJob only
// stops Jobs whose agent never ran).
//
// The manager caches unfinished pods only. A pod that finishes leaves that
// cache with a delete event; the task is then reconciled and reads the pod
// once from the API server by name (the name the task recorded, or the
// one the delete event carried), and remembers it until the task shows its
// outcome (finishedPods).
//
// # Secret inputs
//
// A task's env reads single Secret keys and its envFrom whole Secrets
// (optionally prefixed). The Job names them as valueFrom.secretKeyRef and
// envFrom.secretRef, never optional, in the order given; the kubelet reads
// the values. The manager never keeps one: no value is in the task, its
// Job, its status, an Event, a log line or the webhook payload.
//
// Before the Job is created, every Secret env and envFrom name goes
// through the checks of every object a task names (checkReferences): only
// its metadata is read, and it must be labelled for the task's user or
// for sharing, or the task fails (ReferenceNotAllowed, naming the field).
// Then each such Secret is read once more, in full, uncached, only for its
// key names (checkSecretKeys; the values are dropped at once). A key env
// names that the Secret lacks (SecretKeyNotFound), or a key that envFrom
// would turn into a name the rules of input keys refuse, or one the input
// or env sets already (SecretKeyRefused), keeps the task Pending with the
// reason and a message naming the field, the Secret and the key, as a
// missing Secret does (SecretNotFound). All three can heal without a new
// task, since whoever owns the Secret can fix it: the task looks again
// every missingSecretPoll, and the start timeout fails it with the same
// reason. The checks run until the Job exists, not after: a key env
// reads that goes away later is the kubelet's to report
// (CreateContainerConfigError, a start cause), and a key added to a Secret
// that envFrom reads after that, before the container starts, reaches the
// agent unchecked.
package tasks
