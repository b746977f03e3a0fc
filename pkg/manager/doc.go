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
// What a manager watches, it watches through one of two caches, both set
// up here and started with the manager, each with a readiness check:
//   - the scheduler API's kinds through the generated shared informer
//     factories of Deps.Informers, one per watched namespace; a kind cached
//     only in part (label- or field-selected) replaces the factory's default
//     informer through SchedulerInformers.InformersFor. Reconcilers read
//     them through the generated listers and write through Deps.Clientset.
//     Dynamic informer factories (third-party kinds that may be missing)
//     run the same way (AddInformerFactory).
//   - built-in kinds (pods, the deployments manager's children) through
//     controller-runtime's cache, restricted per kind by the component's
//     CacheByObject.
//
// The one exception is the tasks manager's store of Job records: under 400
// bytes of a Job's 1,320 per task, for its memory goal at 10k tasks (see
// pkg/tasks/jobcache.go).
//
// Every Reconcile follows one checklist: fetch, build a scope, run its
// phases with RunPhases, write the status they computed once if it
// changed, and requeue as the scope says.
//
// Flags may fall back to environment variables (see BindEnv): a flag set on
// the command line wins, otherwise the environment variable is used, otherwise
// the flag's default.
//
// Controllers record events through the events.k8s.io/v1 API with
// Deps.Manager.GetEventRecorder(name); controller-runtime v0.25 deprecates
// the core/v1 GetEventRecorderFor.
package manager
