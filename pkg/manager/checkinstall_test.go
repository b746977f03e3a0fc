package manager

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

func object(apiVersion, kind, namespace, name string, generation, observed int64, conditions ...map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetGeneration(generation)
	status := map[string]any{}
	if observed > 0 {
		status["observedGeneration"] = observed
	}
	var conds []any
	for _, c := range conditions {
		conds = append(conds, c)
	}
	status["conditions"] = conds
	obj.Object["status"] = status
	return obj
}

func cond(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": "said " + reason}
}

// TestInstallCheck: the chart's test passes once every Deployment is
// Available at its latest generation and every CRD Established, and
// otherwise fails naming each object and why.
func TestInstallCheck(t *testing.T) {
	available := object("apps/v1", "Deployment", "ops", "tasks", 2, 2, cond("Available", "True", "MinimumReplicasAvailable"))
	unavailable := object("apps/v1", "Deployment", "ops", "workflows", 1, 1, cond("Available", "False", "MinimumReplicasUnavailable"))
	stale := object("apps/v1", "Deployment", "ops", "deployments", 3, 2, cond("Available", "True", "MinimumReplicasAvailable"))
	established := object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "agenttasks.scheduler.opsnorth.io", 1, 0,
		cond("NamesAccepted", "True", "NoConflicts"), cond("Established", "True", "InitialNamesAccepted"))
	pending := object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "workflows.scheduler.opsnorth.io", 1, 0)
	tests := []struct {
		name        string
		deployments []string
		crds        []string
		want        []string // in the output
		wantErr     bool
	}{
		{name: "ready", deployments: []string{"tasks"}, crds: []string{"agenttasks.scheduler.opsnorth.io"},
			want: []string{"Deployment ops/tasks: Available", "CustomResourceDefinition agenttasks.scheduler.opsnorth.io: Established"}},
		{name: "not available", deployments: []string{"tasks", "workflows"}, wantErr: true,
			want: []string{"Deployment ops/tasks: Available", "Deployment ops/workflows: NOT READY: Available=False (MinimumReplicasUnavailable: said MinimumReplicasUnavailable)"}},
		{name: "generation not observed", deployments: []string{"deployments"}, wantErr: true,
			want: []string{"Deployment ops/deployments: NOT READY: generation 3 not observed yet (2)"}},
		{name: "missing", deployments: []string{"gone"}, wantErr: true,
			want: []string{`Deployment ops/gone: NOT READY: deployments.apps "gone" not found`}},
		{name: "not established", crds: []string{"workflows.scheduler.opsnorth.io"}, wantErr: true,
			want: []string{"CustomResourceDefinition workflows.scheduler.opsnorth.io: NOT READY: no Established condition yet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), available, unavailable, stale, established, pending)
			var out bytes.Buffer
			check := InstallCheck{Namespace: "ops", Deployments: tt.deployments, CRDs: tt.crds, Timeout: 300 * time.Millisecond, Interval: 50 * time.Millisecond}
			err := check.Run(context.Background(), dyn, &out)
			if tt.wantErr {
				require.ErrorContains(t, err, "not ready after 300ms")
			} else {
				require.NoError(t, err)
			}
			for _, line := range tt.want {
				assert.Contains(t, out.String(), line+"\n")
			}
		})
	}
}

// TestInstallCheckWaits: an object that becomes ready within the timeout passes.
func TestInstallCheckWaits(t *testing.T) {
	d := object("apps/v1", "Deployment", "ops", "tasks", 1, 0)
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), d)
	go func() {
		time.Sleep(100 * time.Millisecond)
		ready := object("apps/v1", "Deployment", "ops", "tasks", 1, 1, cond("Available", "True", "MinimumReplicasAvailable"))
		_, err := dyn.Resource(deploymentsResource).Namespace("ops").Update(context.Background(), ready, metav1.UpdateOptions{})
		assert.NoError(t, err)
	}()
	var out bytes.Buffer
	check := InstallCheck{Namespace: "ops", Deployments: []string{"tasks"}, Timeout: 10 * time.Second, Interval: 20 * time.Millisecond}
	require.NoError(t, check.Run(context.Background(), dyn, &out))
	assert.Equal(t, "Deployment ops/tasks: Available\n", out.String())
}

// TestCheckInstallCommand: every manager binary has the subcommand the
// chart's test pod runs, with its flags.
func TestCheckInstallCommand(t *testing.T) {
	var widget string
	out, err := execute(NewCommand(testComponent(&widget)), "check-install", "--help")
	require.NoError(t, err)
	for _, want := range []string{"--deployment", "--crd", "--namespace", "--timeout", "--kubeconfig"} {
		assert.Contains(t, out, want)
	}
	_, err = execute(NewCommand(testComponent(&widget)), "check-install", "extra")
	assert.Error(t, err, "no arguments")
}
