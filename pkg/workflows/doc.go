// Package workflows holds the workflows manager's Workflow controller: it runs
// a Workflow's steps as AgentTasks it owns, passes outputs on, retries failed
// steps and delivers the completion webhook.
//
// Everything is derived from the AgentTasks that exist and the Workflow's
// status: each step attempt has a deterministic task name (TaskName), so a
// restarted manager finds the tasks it created, and a create that races a
// stale cache hits AlreadyExists instead of running a step twice.
//
// Failure policy: once a step has failed for good (its retries are spent, its
// output is over budget, its input references a missing output key, or its
// task was deleted) no new step starts and the steps still running are
// stopped: their AgentTasks are deleted (their Jobs follow through garbage
// collection) and they are reported Failed with a "stopped" message. Steps that
// never started are Skipped. The workflow fails at once rather than waiting
// for siblings whose results nothing can use, which frees the cluster and
// fires the completion webhook without delay; workflow timeoutSeconds stops
// running steps the same way, with reason Timeout.
//
// Controls (control.go, approval.go): spec.suspend holds new starts and
// the timeout clock, spec.stop finishes the workflow with reason Stopped
// through the same failure path, spec.retry turns a Failed workflow back into
// a run of the steps that did not succeed (succeeded steps keep their stored
// status and output; a retried step's attempts continue its numbering, so
// its task names are new), and approval steps wait for a decision of the
// current run in spec.approvals, or their timeout.
//
// Output budget: a step's stored output (keys plus values) may hold at most
// 64 KiB and a workflow's stored outputs together at most 256 KiB, so a
// Workflow stays far below the 1.5 MB object limit. A step whose output does
// not fit fails with reason OutputTooLarge; outputs already stored are never
// evicted.
package workflows
