package resolve

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

// agentWrapper builds Agents for tests: makeAgent("db", "1.0.0").ready().obj().
type agentWrapper struct{ ossav1.Agent }

func makeAgent(id, version string) *agentWrapper {
	return &agentWrapper{ossav1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: "ns", Generation: 1},
		Spec: ossav1.AgentSpec{OSSAVersion: "1.0", Agent: ossav1.AgentDefinition{
			ID: id, Name: id, Version: version,
		}},
	}}
}

func (w *agentWrapper) name(n string) *agentWrapper { w.Name = n; return w }

func (w *agentWrapper) phase(p ossav1.AgentPhase) *agentWrapper {
	w.Status.Phase, w.Status.ObservedGeneration = p, w.Generation
	return w
}

func (w *agentWrapper) ready() *agentWrapper { return w.phase(ossav1.AgentReady) }

func (w *agentWrapper) generation(g int64) *agentWrapper { w.Generation = g; return w }

func (w *agentWrapper) deps() *ossav1.Dependencies {
	if w.Spec.Agent.Dependencies == nil {
		w.Spec.Agent.Dependencies = &ossav1.Dependencies{}
	}
	return w.Spec.Agent.Dependencies
}

// requires adds a required dependency on id within [min, max].
func (w *agentWrapper) requires(id, min, max string) *agentWrapper {
	d := w.deps()
	d.Required = append(d.Required, ossav1.RequiredDependency{AgentID: id, MinVersion: min, MaxVersion: max})
	return w
}

func (w *agentWrapper) uses(id, fallback string) *agentWrapper {
	d := w.deps()
	d.Optional = append(d.Optional, ossav1.OptionalDependency{AgentID: id, Fallback: fallback})
	return w
}

func (w *agentWrapper) obj() *ossav1.Agent { return &w.Agent }

func raw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

// capability has the given schemas; its name is c<i> for test tables.
func capability(i int, in, out string) ossav1.Capability {
	return ossav1.Capability{Name: fmt.Sprintf("c%d", i), Description: "d", InputSchema: raw(in), OutputSchema: raw(out)}
}

// depCase is one Agent, its namespace and how its dependencies stand.
type depCase struct {
	name   string
	agent  *ossav1.Agent
	peers  []*ossav1.Agent
	want   []ossav1.ResolvedDependency
	reason string
	msg    string
}

func runDepCases(t *testing.T, cases []depCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := Dependencies(tt.agent, tt.peers)
			assert.Equal(t, tt.want, got.Dependencies)
			assert.Equal(t, tt.reason, got.Reason)
			assert.Equal(t, tt.reason == ReasonResolved, got.Ready)
			assert.Equal(t, tt.msg, got.Message)
			assert.Nil(t, got.Cycle)

			reversed := slices.Clone(tt.peers)
			slices.Reverse(reversed)
			assert.Equal(t, got, Dependencies(tt.agent, reversed), "the order of peers does not matter")
		})
	}
}

func dep(id, agent, version string, ready bool, msg string) ossav1.ResolvedDependency {
	return ossav1.ResolvedDependency{AgentID: id, Agent: agent, Version: version, Ready: ready, Message: msg}
}

func optional(rd ossav1.ResolvedDependency) ossav1.ResolvedDependency { rd.Optional = true; return rd }
