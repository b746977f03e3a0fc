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
// Every kind a manager watches comes from informers handed out here; they
// start with the manager on every replica, and a readiness check waits for
// their caches to sync (AddInformerFactory):
//   - the scheduler API's kinds from the generated factories of
//     Deps.Informers, one per watched namespace; a kind cached only in part
//     (label- or field-selected) replaces the factory's default informer
//     through SchedulerInformers.InformersFor. Reconcilers read them through
//     the generated listers and write through Deps.Clientset.
//   - built-in kinds from Deps.Kube (protobuf), each informer selected,
//     transformed and indexed as its KubeKind says, read through client-go's
//     generated listers or its indexers. (Not client-go's informer factory:
//     it would add 26 MB to each binary, see KubeInformers.)
//   - third-party kinds that may be missing from dynamic factories, run the
//     same way.
//
// Controllers watch those informers with Watch, which holds a controller's
// workers until the informer synced. The manager's own cache starts no
// informer: a cached read through Manager.GetClient fails with
// ErrResourceNotCached rather than cache a whole kind unselected.
//
// The one cache that holds something other than its kind's objects is the
// tasks manager's Job records: a transform turns each Job into a record
// under 400 bytes of a Job's 1,320, and records of settled tasks are
// dropped, for its memory goal at 10k tasks (see pkg/tasks/jobcache.go).
//
// Every Reconcile follows one checklist: fetch, build a scope, run its
// phases with RunPhases, write the status they computed once if it
// changed, and requeue as the scope says. Each controller names its phases
// with its PhaseMetrics, which times every phase and counts its errors by
// a fixed set of types (ErrorType).
//
// Flags may fall back to environment variables (see BindEnv): a flag set on
// the command line wins, otherwise the environment variable is used, otherwise
// the flag's default.
//
// Controllers record events through the events.k8s.io/v1 API with
// Deps.Manager.GetEventRecorder(name); controller-runtime v0.25 deprecates
// the core/v1 GetEventRecorderFor.
package manager
