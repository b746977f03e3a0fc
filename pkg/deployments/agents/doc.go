// Package agents holds the deployments manager's Agent controller: it runs
// an ossa.ai/v1 Agent (an OSSA 1.0 agent) as a long-lived workload in the
// Agent's own namespace, with the builders the UserDeployment controller
// uses (render.Workload, children.Applier).
//
// Children, named after the Agent, each labelled managed-by and
// scheduler.opsnorth.io/agent=<name> and controlled by the Agent (owner
// reference with controller and blockOwnerDeletion; no finalizer: the
// garbage collector deletes them with the Agent):
//   - ConfigMap <name>-capabilities, key capabilities.json: the capabilities
//     with their schemas as canonical JSON (sorted keys);
//   - Deployment <name>: spec.agent.runtime's image and command, env
//     OSSA_AGENT_ID, OSSA_AGENT_NAME, OSSA_AGENT_VERSION, OSSA_AGENT_ROLE,
//     OSSA_CAPABILITIES (the names, comma-joined), the ConfigMap mounted
//     read-only at /etc/ossa/capabilities.json (a change rolls the pods:
//     config-hash annotation), cpu and memory requests (memory limit =
//     request, nvidia.com/gpu: 1 with gpu), liveness and readiness probes
//     from runtime.health_check, restricted pod security; replicas from
//     spec.replicas, which kubectl scale and the autoscaler change through
//     the Agent's scale subresource, so the controller never fights them;
//   - Service <name> on spec.port (default health_check.port, else 8080);
//   - HorizontalPodAutoscaler <name> with spec.autoscaling, targeting the
//     Agent itself (ossa.ai/v1 Agent, scale subresource; status.selector
//     selects its pods) on CPU and/or memory utilization;
//   - ServiceMonitor <name> with monitoring.metrics when prometheus-operator's
//     CRD is installed (discovered at start, as for UserDeployments).
//
// Reconcile is a checklist: runtime type (local, serverless and edge cannot
// run as a Deployment: Stalled UnsupportedRuntime), capability schemas
// (resolve.Capabilities, costly, so only for a generation the status has
// not observed and capabilities that did not pass before, not after a mere
// scale: Stalled InvalidCapabilitySchema naming the capability and field), dependencies (resolve.Dependencies over the namespace's Agents),
// children (server-side apply, skipped when the cached child already
// carries the desired hash and fields), pruning of children no longer
// desired, then the rollout. Both refusals delete every child. The status
// is written once, with server-side apply, only when it changed: a
// converged Agent costs no write, also after a restart (the applied hash
// lives in the children).
//
// Dependencies: until every required dependency (an Agent of the namespace
// with that spec.agent.id, Ready at its current generation, at a version in
// range) is met, an Agent that does not run yet (no Deployment) is phase
// Waiting with DependenciesReady=False naming what it waits for, and
// nothing is created. One that runs keeps running and being applied when a
// dependency later goes unready: DependenciesReady turns False and the
// Ready condition's message says so. A required-dependency cycle is phase
// Stalled, reason DependencyCycle; what runs is left alone. Optional
// dependencies only annotate status.dependencies. Every Agent change
// requeues the Agents of its namespace that name its id (an informer index).
//
// Rollout: the Deployment rolled out (children.DeploymentReady) is phase
// Ready; otherwise Progressing (Reconciling=True), with the reason of the
// Deployment's ReplicaFailure as refusal.OfMessage names it, or Stalled
// ProgressDeadlineExceeded once the Deployment controller gave up. Until
// then the Ready condition names what keeps the Agent's pods from running
// ready, as for UserDeployments (podcause: ImagePullFailed, InvalidImage,
// Unschedulable, ContainerConfigError, ContainerStartFailed, CrashLooping
// with the last exit code), within seconds: the pods are cached trimmed
// and enqueue their Agent only when their cause changes. A child
// name held by another owner is Stalled ChildConflict, as for
// UserDeployments, and retried every minute. Events (events.k8s.io) are
// recorded on phase changes only.
package agents
