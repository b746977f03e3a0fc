package resolve

import (
	"testing"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

func TestDependencyVersionsAndChoice(t *testing.T) {
	runDepCases(t, []depCase{{
		name:   "below min",
		agent:  makeAgent("app", "1.0.0").requires("db", "2.0.0", "3.0.0").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "1.2.0").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "1.2.0", false, `required agent "db" is at 1.2.0, outside >=2.0.0 <=3.0.0`)},
		reason: ReasonDependencyVersionOutOfRange, msg: `required agent "db" is at 1.2.0, outside >=2.0.0 <=3.0.0`,
	}, {
		name:   "above max",
		agent:  makeAgent("app", "1.0.0").requires("db", "", "3.0.0").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "3.0.1").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "3.0.1", false, `required agent "db" is at 3.0.1, outside <=3.0.0`)},
		reason: ReasonDependencyVersionOutOfRange, msg: `required agent "db" is at 3.0.1, outside <=3.0.0`,
	}, {
		name:   "bounds are inclusive",
		agent:  makeAgent("app", "1.0.0").requires("lo", "2.0.0", "3.0.0").requires("hi", "2.0.0", "3.0.0").obj(),
		peers:  []*ossav1.Agent{makeAgent("lo", "2.0.0").ready().obj(), makeAgent("hi", "3.0.0").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("lo", "lo", "2.0.0", true, ""), dep("hi", "hi", "3.0.0", true, "")},
		reason: ReasonResolved, msg: "all required agents are ready: lo, hi",
	}, {
		name:   "a prerelease is below its release",
		agent:  makeAgent("app", "1.0.0").requires("db", "2.0.0", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "2.0.0-rc.1").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "2.0.0-rc.1", false, `required agent "db" is at 2.0.0-rc.1, outside >=2.0.0`)},
		reason: ReasonDependencyVersionOutOfRange, msg: `required agent "db" is at 2.0.0-rc.1, outside >=2.0.0`,
	}, {
		name:   "build metadata is ignored",
		agent:  makeAgent("app", "1.0.0").requires("db", "2.0.0", "2.0.0").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "2.0.0+build.7").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "2.0.0+build.7", true, "")},
		reason: ReasonResolved, msg: "all required agents are ready: db",
	}, {
		name:   "unparsable version",
		agent:  makeAgent("app", "1.0.0").requires("db", "1.0.0", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "v1.2").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "v1.2", false, `required agent "db" has version "v1.2", which is not a semantic version`)},
		reason: ReasonDependencyVersionOutOfRange, msg: `required agent "db" has version "v1.2", which is not a semantic version`,
	}, {
		name:   "unparsable bound",
		agent:  makeAgent("app", "1.0.0").requires("db", "1.0", "").obj(),
		peers:  []*ossav1.Agent{makeAgent("db", "1.2.0").ready().obj()},
		want:   []ossav1.ResolvedDependency{dep("db", "db", "1.2.0", false, `required agent "db": min_version "1.0" is not a semantic version`)},
		reason: ReasonDependencyVersionOutOfRange, msg: `required agent "db": min_version "1.0" is not a semantic version`,
	}, {
		name:  "of several, one that meets it",
		agent: makeAgent("app", "1.0.0").requires("db", "2.0.0", "2.9.9").obj(),
		peers: []*ossav1.Agent{
			makeAgent("db", "3.0.0").name("db-new").ready().obj(),
			makeAgent("db", "2.5.0").name("db-b").phase(ossav1.AgentProgressing).obj(),
			makeAgent("db", "2.1.0").name("db-old").ready().obj(),
		},
		want:   []ossav1.ResolvedDependency{dep("db", "db-old", "2.1.0", true, "")},
		reason: ReasonResolved, msg: "all required agents are ready: db",
	}, {
		name:  "of several that meet it, the highest version then the first name",
		agent: makeAgent("app", "1.0.0").requires("db", "2.0.0", "").requires("mq", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{
			makeAgent("db", "2.1.0").name("db-a").ready().obj(),
			makeAgent("db", "2.2.0").name("db-b").ready().obj(),
			makeAgent("mq", "1.0.0").name("mq-b").ready().obj(),
			makeAgent("mq", "1.0.0").name("mq-a").ready().obj(),
		},
		want:   []ossav1.ResolvedDependency{dep("db", "db-b", "2.2.0", true, ""), dep("mq", "mq-a", "1.0.0", true, "")},
		reason: ReasonResolved, msg: "all required agents are ready: db, mq",
	}, {
		name:  "of several that do not, one in range to wait for",
		agent: makeAgent("app", "1.0.0").requires("db", "2.0.0", "").obj(),
		peers: []*ossav1.Agent{
			makeAgent("db", "1.0.0").name("db-old").ready().obj(),
			makeAgent("db", "2.0.0").name("db-new").phase(ossav1.AgentProgressing).obj(),
		},
		want:   []ossav1.ResolvedDependency{dep("db", "db-new", "2.0.0", false, `waiting for required agent "db" (not ready: Progressing)`)},
		reason: ReasonDependencyNotReady, msg: `waiting for required agent "db" (not ready: Progressing)`,
	}})
}
