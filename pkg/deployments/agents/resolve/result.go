package resolve

import (
	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

// Reasons for the DependenciesReady condition.
const (
	ReasonResolved                    = "Resolved"
	ReasonDependencyMissing           = "DependencyMissing"
	ReasonDependencyNotReady          = "DependencyNotReady"
	ReasonDependencyVersionOutOfRange = "DependencyVersionOutOfRange"
	ReasonDependencyCycle             = "DependencyCycle"
)

// Bounds of a Result, matching the Agent status schema.
const (
	// MaxDependencies is status.dependencies' MaxItems.
	MaxDependencies = 64
	// MaxMessageBytes is the longest Result.Message and
	// ResolvedDependency.Message (the condition and status MaxLength).
	MaxMessageBytes = 1024
)

// Result is how an Agent's dependencies stand.
type Result struct {
	// Dependencies are the required dependencies then the optional ones,
	// each in spec order; at most MaxDependencies.
	Dependencies []ossav1.ResolvedDependency
	// Ready is true when every required dependency is met; optional ones
	// never block.
	Ready bool
	// Reason is one of the Reason constants: ReasonResolved when Ready,
	// else the worst problem (cycle > missing > out of range > not ready).
	Reason string
	// Message names the agent ids waited for; at most MaxMessageBytes.
	Message string
	// Cycle is the agent ids of the shortest required-dependency cycle
	// through this agent, first id repeated last (e.g. [a b a]); nil if none.
	Cycle []string
}
