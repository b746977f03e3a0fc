package resolve

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

func TestDependencies(t *testing.T) {
	now := metav1.Now()
	deleting := makeAgent("db", "2.0.0").ready().obj()
	deleting.DeletionTimestamp = &now

	runDepCases(t, []depCase{{

		name:   "no dependencies",
		agent:  makeAgent("app", "1.0.0").obj(),
		reason: ReasonResolved, msg: "no required dependencies",
	}, {
		name:   "required met",
		agent:  makeAgent("app", "1.0.0").requires("db", "2.0.0", "3.0.0").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "2.1.0").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "2.1.0", true, "")},
		reason: ReasonResolved, msg: "all required agents are ready: db",
	}, {
		name:   "missing",
		agent:  makeAgent("app", "1.0.0").requires("planner", "1.0.0", "").obj(),
		want:   []ossav1.ResolvedDependency{dep("planner", "", "", false, `required agent "planner" not found in namespace`)},
		reason: ReasonDependencyMissing, msg: `required agent "planner" not found in namespace`,
	}, {
		name:   "not ready",
		agent:  makeAgent("app", "1.0.0").requires("db", "1.0.0", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "1.0.0").phase(ossav1.AgentProgressing).obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "1.0.0", false, `waiting for required agent "db" (not ready: Progressing)`)},
		reason: ReasonDependencyNotReady, msg: `waiting for required agent "db" (not ready: Progressing)`,
	}, {
		name:   "no status yet",
		agent:  makeAgent("app", "1.0.0").requires("db", "1.0.0", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "1.0.0").obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "1.0.0", false, `waiting for required agent "db" (not ready: no status yet)`)},
		reason: ReasonDependencyNotReady, msg: `waiting for required agent "db" (not ready: no status yet)`,
	}, {
		name:   "ready for an older generation",
		agent:  makeAgent("app", "1.0.0").requires("db", "1.0.0", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "1.0.0").ready().generation(2).obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "1.0.0", false, `waiting for required agent "db" (not ready: generation 2 not yet observed)`)},
		reason: ReasonDependencyNotReady, msg: `waiting for required agent "db" (not ready: generation 2 not yet observed)`,
	}, {
		name:   "being deleted",
		agent:  makeAgent("app", "1.0.0").requires("db", "1.0.0", "").obj(),
		peers:  []*ossav1.Agent{deleting},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "2.0.0", false, `waiting for required agent "db" (not ready: being deleted)`)},
		reason: ReasonDependencyNotReady, msg: `waiting for required agent "db" (not ready: being deleted)`,
	}, {
		name:   "an id both required and optional is listed once, as required",
		agent:  makeAgent("app", "1.0.0").uses("db", "").requires("db", "1.0.0", "").uses("db", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "1.0.0").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "1.0.0", true, "")},
		reason: ReasonResolved, msg: "all required agents are ready: db",
	}, {
		name:   "itself among the peers",
		agent:  makeAgent("app", "1.0.0").requires("db", "1.0.0", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("app", "1.0.0").obj(), nil, makeAgent("db", "1.0.0").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "1.0.0", true, "")},
		reason: ReasonResolved, msg: "all required agents are ready: db",
	}, {
		name:  "optional ones never block",
		agent: makeAgent("app", "1.0.0").uses("cache", "in-memory cache").uses("search", "").uses("tracer", "").obj(),
		peers: []*ossav1.Agent{makeAgent("search", "1.0.0").phase(ossav1.AgentStalled).obj(), makeAgent("tracer", "0.1.0").ready().obj()},
		want: []ossav1.ResolvedDependency{
			optional(dep("cache", "", "", false, `optional agent "cache" not found in namespace; fallback: in-memory cache`)),
			optional(dep("search", "search", "1.0.0", false, `optional agent "search" not ready (Stalled); going on without it`)),
			optional(dep("tracer", "tracer", "0.1.0", true, "")),
		},
		reason: ReasonResolved, msg: "no required dependencies",
	}, {
		name:  "required first, then optional, each in spec order",
		agent: makeAgent("app", "1.0.0").uses("o2", "").requires("r2", "1.0.0", "").uses("o1", "").requires("r1", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{makeAgent("r1", "1.0.0").ready().obj(), makeAgent("r2", "1.0.0").ready().obj(), makeAgent("o1", "1.0.0").ready().obj(), makeAgent("o2", "1.0.0").ready().obj()},
		want: []ossav1.ResolvedDependency{
			dep("r2", "r2", "1.0.0", true, ""), dep("r1", "r1", "1.0.0", true, ""),
			optional(dep("o2", "o2", "1.0.0", true, "")), optional(dep("o1", "o1", "1.0.0", true, "")),
		},
		reason: ReasonResolved, msg: "all required agents are ready: r2, r1",
	}, {
		name: "worst reason first, then the message worst first",
		agent: makeAgent("app", "1.0.0").requires("slow", "1.0.0", "").requires("old", "2.0.0", "").
			requires("gone", "1.0.0", "").requires("ok", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{
			makeAgent("slow", "1.0.0").phase(ossav1.AgentPending).obj(),
			makeAgent("old", "1.0.0").ready().obj(),
			makeAgent("ok", "1.0.0").ready().obj(),
		},
		want: []ossav1.ResolvedDependency{
			dep("slow", "slow", "1.0.0", false, `waiting for required agent "slow" (not ready: Pending)`),
			dep("old", "old", "1.0.0", false, `required agent "old" is at 1.0.0, outside >=2.0.0`),
			dep("gone", "", "", false, `required agent "gone" not found in namespace`),
			dep("ok", "ok", "1.0.0", true, ""),
		},
		reason: ReasonDependencyMissing,
		msg:    `required agent "gone" not found in namespace; required agent "old" is at 1.0.0, outside >=2.0.0; waiting for required agent "slow" (not ready: Pending)`,
	}, {
		name:  "out of range before not ready",
		agent: makeAgent("app", "1.0.0").requires("slow", "1.0.0", "").requires("old", "2.0.0", "").obj(),
		peers: []*ossav1.Agent{makeAgent("slow", "1.0.0").obj(), makeAgent("old", "1.0.0").ready().obj()},
		want: []ossav1.ResolvedDependency{
			dep("slow", "slow", "1.0.0", false, `waiting for required agent "slow" (not ready: no status yet)`),
			dep("old", "old", "1.0.0", false, `required agent "old" is at 1.0.0, outside >=2.0.0`),
		},
		reason: ReasonDependencyVersionOutOfRange,
		msg:    `required agent "old" is at 1.0.0, outside >=2.0.0; waiting for required agent "slow" (not ready: no status yet)`,
	}})
}

func TestDependenciesNilAgent(t *testing.T) {
	got := Dependencies(nil, nil)
	assert.True(t, got.Ready)
	assert.Equal(t, ReasonResolved, got.Reason)
}

func TestDependenciesBounded(t *testing.T) {
	w := makeAgent("app", "1.0.0")
	for i := range 40 {
		w.requires(strings.Repeat("r", 60)+fmt.Sprintf("%03d", i), "1.0.0", "")
		w.uses(fmt.Sprintf("o%03d", i), strings.Repeat("é", 600))
	}
	got := Dependencies(w.obj(), nil)
	require.Len(t, got.Dependencies, MaxDependencies)
	assert.False(t, got.Dependencies[39].Optional)
	assert.True(t, got.Dependencies[40].Optional)
	assert.Equal(t, ReasonDependencyMissing, got.Reason)
	assert.LessOrEqual(t, len(got.Message), MaxMessageBytes)
	assert.True(t, strings.HasSuffix(got.Message, "…"))
	for _, d := range got.Dependencies {
		assert.LessOrEqual(t, len(d.Message), MaxMessageBytes)
		assert.True(t, utf8.ValidString(d.Message), d.Message)
	}
}
