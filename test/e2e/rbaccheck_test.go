//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// TestRBACErrorsSeesOnlyRBAC: the suite's log check fails on the
// authorizer's refusal of a manager, and not on other "forbidden" answers a
// manager logs while doing its job.
func TestRBACErrorsSeesOnlyRBAC(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		refused    bool
	}{
		{"a list refused by RBAC", `E1203 reflector.go:200] "Failed to watch" err="failed to list *v1.Pod: pods is forbidden: User \"system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks\" cannot list resource \"pods\" in API group \"\" at the cluster scope"`, true},
		{"a console-encoded refusal", `ERROR	Reconciler error	{"error": "jobs.batch is forbidden: User "system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks" cannot create resource "jobs""}`, true},
		{"an admission policy reported in an event", `DEBUG	events	Event occurred	{"note": "Error creating: pods \"x\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no"}`, false},
		{"a namespace being deleted", `ERROR	events	Server rejected event	{"error": "events.events.k8s.io \"x\" is forbidden: unable to create new content in namespace n because it is being terminated"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "tasks.log")
			require.NoError(t, os.WriteFile(log, []byte("starting\n"+tc.line+"\n"), 0o600))
			err := rbacErrors([]*localcluster.Manager{{Component: "tasks", Process: &localcluster.Process{LogPath: log}}})
			assert.Equal(t, tc.refused, err != nil, "%v", err)
		})
	}
}
