package refusal_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"opsnorth.io/scheduler/pkg/refusal"
)

// The messages are the Job and ReplicaSet controllers' FailedCreate texts
// as a 1.37 control plane writes them ("Error creating: " + the API error).
func TestOfMessage(t *testing.T) {
	cases := []struct {
		name, msg string
		terminal  bool
		reason    string
	}{
		{"missing service account",
			`Error creating: pods "review-pr-1234-" is forbidden: error looking up service account agent-tasks/code-review-agent: serviceaccount "code-review-agent" not found`,
			false, refusal.ReasonServiceAccountNotFound},
		{"exceeded quota",
			`Error creating: pods "t-x7k2p" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`,
			false, refusal.ReasonQuotaExceeded},
		{"failed quota",
			`Error creating: pods "t-x7k2p" is forbidden: failed quota: compute: must specify limits.cpu for: agent`,
			true, refusal.ReasonAdmissionDenied},
		{"pod security",
			`Error creating: pods "t-x7k2p" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "agent" must set securityContext.runAsNonRoot=true)`,
			true, refusal.ReasonAdmissionDenied},
		{"policy",
			`Error creating: pods "t-x7k2p" is forbidden: ValidatingAdmissionPolicy 'no-pods' with binding 'no-pods' denied request: no`,
			true, refusal.ReasonAdmissionDenied},
		{"terminating namespace",
			`Error creating: pods "t-x7k2p" is forbidden: unable to create new content in namespace agent-tasks because it is being terminated`,
			false, refusal.ReasonNamespaceTerminating},
		{"anything else", `Error creating: Internal error occurred: etcdserver: request timed out`, false, refusal.ReasonFailedCreate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := refusal.OfMessage(tc.msg)
			assert.Equal(t, refusal.Refusal{Terminal: tc.terminal, Reason: tc.reason, Message: tc.msg}, got)
		})
	}
}
