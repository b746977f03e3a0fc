package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const auditLines = `{"kind":"Event","stage":"RequestReceived","verb":"create","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks"},"objectRef":{"resource":"jobs","namespace":"agent-tasks","name":"bx-r-00000-s0-1","apiGroup":"batch"}}
{"kind":"Event","stage":"ResponseComplete","verb":"create","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks"},"objectRef":{"resource":"jobs","namespace":"agent-tasks","name":"bx-r-00000-s0-1","apiGroup":"batch"},"responseStatus":{"code":201}}
{"kind":"Event","stage":"ResponseComplete","verb":"patch","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks"},"objectRef":{"resource":"agenttasks","namespace":"agent-tasks","name":"bx-r-00000-s0-1","apiGroup":"scheduler.opsnorth.io","subresource":"status"},"responseStatus":{"code":200}}
{"kind":"Event","stage":"ResponseComplete","verb":"patch","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks"},"objectRef":{"resource":"agenttasks","namespace":"agent-tasks","name":"bx-r-00001-s0-1","apiGroup":"scheduler.opsnorth.io","subresource":"status"},"responseStatus":{"code":409}}
{"kind":"Event","stage":"ResponseComplete","verb":"create","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-workflows"},"objectRef":{"resource":"events","namespace":"agent-tasks","name":"bx-r-00000.18a","apiGroup":"events.k8s.io"},"responseStatus":{"code":201}}
{"kind":"Event","stage":"ResponseComplete","verb":"create","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-workflows"},"objectRef":{"resource":"events","namespace":"agent-tasks","name":"bx-r-00001.18b","apiGroup":"events.k8s.io"},"responseStatus":{"code":201}}
{"kind":"Event","stage":"ResponseComplete","verb":"create","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-workflows"},"objectRef":{"resource":"events","namespace":"agent-tasks","name":"bx-r-00001.18c"},"responseStatus":{"code":201}}
{"kind":"Event","stage":"ResponseComplete","verb":"update","user":{"username":"system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks"},"objectRef":{"resource":"agenttasks","namespace":"agent-tasks","name":"bw-old-00003-s4-1","apiGroup":"scheduler.opsnorth.io","subresource":"status"},"responseStatus":{"code":200}}
{"kind":"Event","stage":"ResponseComplete","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"workflows","name":"bx-r-00000","apiGroup":"scheduler.opsnorth.io"},"responseStatus":{"code":201}}
`

func TestReadAudit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	// The last line is still being written: it waits for the next read.
	require.NoError(t, os.WriteFile(path, []byte(auditLines+`{"kind":"Event","sta`), 0o600))
	evs, next, err := readAudit(path, 0)
	require.NoError(t, err)
	assert.Len(t, evs, 8, "RequestReceived skipped")
	assert.Equal(t, int64(len(auditLines)), next)
	evs, again, err := readAudit(path, next)
	require.NoError(t, err)
	assert.Empty(t, evs)
	assert.Equal(t, next, again)

	_, err = parseAudit([]byte("{not json\n"))
	assert.Error(t, err)
}

func TestTallyAudit(t *testing.T) {
	evs, err := parseAudit([]byte(auditLines))
	require.NoError(t, err)
	users := map[string]string{managerUser("tasks"): "tasks", managerUser("workflows"): "workflows"}
	mine := func(name string) bool { return len(name) > 5 && name[:5] == "bx-r-" }
	in, other := tallyAudit(evs, users, 2, mine)
	assert.Equal(t, []AuditCount{
		{Manager: "tasks", Verb: "create", Resource: "jobs.batch", Code: 201, Count: 1, PerUnit: 0.5},
		{Manager: "tasks", Verb: "patch", Resource: "agenttasks/status.scheduler.opsnorth.io", Code: 200, Count: 1, PerUnit: 0.5},
		{Manager: "tasks", Verb: "patch", Resource: "agenttasks/status.scheduler.opsnorth.io", Code: 409, Count: 1, PerUnit: 0.5},
		{Manager: "workflows", Verb: "create", Resource: "events.events.k8s.io", Code: 201, Count: 2, PerUnit: 1},
		{Manager: "workflows", Verb: "create", Resource: "events", Code: 201, Count: 1, PerUnit: 0.5},
	}, in, "events.k8s.io Events apart from core Events; failed requests apart; the admin not counted")
	assert.Equal(t, []AuditCount{
		{Manager: "tasks", Verb: "update", Resource: "agenttasks/status.scheduler.opsnorth.io", Code: 200, Count: 1, PerUnit: 0.5},
	}, other)
	assert.Equal(t, map[string]float64{"deployments": 0, "tasks": 1.5, "workflows": 1.5}, perManager(in, 2, []string{"deployments", "tasks", "workflows"}))
}

func TestAuditPolicy(t *testing.T) {
	var policy struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		OmitStages []string `json:"omitStages"`
		Rules      []struct {
			Level string   `json:"level"`
			Users []string `json:"users"`
			Verbs []string `json:"verbs"`
		} `json:"rules"`
	}
	require.NoError(t, yaml.UnmarshalStrict(AuditPolicy(), &policy))
	assert.Equal(t, "audit.k8s.io/v1", policy.APIVersion)
	assert.Equal(t, "Policy", policy.Kind)
	assert.Equal(t, []string{"RequestReceived"}, policy.OmitStages)
	require.Len(t, policy.Rules, 2)
	assert.Equal(t, "Metadata", policy.Rules[0].Level)
	assert.Contains(t, policy.Rules[0].Users, "system:serviceaccount:opsnorth-system:opsnorth-scheduler-tasks")
	assert.Len(t, policy.Rules[0].Users, 3)
	assert.NotContains(t, policy.Rules[0].Verbs, "get")
	assert.Contains(t, policy.Rules[0].Verbs, "patch")
	assert.Equal(t, "None", policy.Rules[1].Level)
}
