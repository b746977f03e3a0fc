// Package manager is the runtime shared by the scheduler's manager binaries
// (deployments, tasks, workflows).
//
// A binary declares a Component (its name, leader-election ID, flags,
// validation, watched namespaces, cache options and a Setup function) and
// hands it to NewCommand. The returned cobra command parses and validates
// the common Options and the component's own flags, builds a
// controller-runtime manager and calls Component.Setup, where controllers
// are registered, before starting the manager.
//
// Flags may fall back to environment variables (see BindEnv): a flag set on
// the command line wins, otherwise the environment variable is used, otherwise
// the flag's default.
//
// Controllers record events through the events.k8s.io/v1 API with
// Deps.Manager.GetEventRecorder(name); controller-runtime v0.25 deprecates
// the core/v1 GetEventRecorderFor.
package manager
