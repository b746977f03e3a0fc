// Package agents holds the deployments manager's Agent controller: it runs
// an ossa.ai/v1 Agent (an OSSA 1.0 agent) as a long-lived workload in the
// Agent's own namespace, with the builders the UserDeployment controller
// uses (render.Workload, children.Applier).
//
// Children, named after the Agent, each labelled managed-by and
// scheduler.opsnorth.io/agent=<name> and controlled by the Agent (owner
// reference with controller and blockOwnerDeletion; no finalizer: the
// garbage collector deletes them with the Agent):
//   - NetworkPolicy <name> (unless --disable-network-policies), applied
//     first: policy type Ingress for the Agent's pods, admitting only the
//     pods (managed-by, scheduler.opsnorth.io/agent in the names of its
//     dependents) of the Agents of its namespace whose required or optional
//     dependencies name its id, on any port. Nothing from another
//     namespace (ingress controller and Prometheus included), nor from its
//     own replicas; no dependents, no ingress. Egress is not restricted.
//     Every Agent change requeues the Agents it depends on, so the policy
//     follows its dependents;
//   - ConfigMap <name>-capabilities, key capabilities.json: the capabilities
//     with their schemas as canonical JSON (sorted keys);
//   - Deployment <name>: spec.agent.runtime's image and command, env
//     OSSA_AGENT_ID, OSSA_AGENT_NAME, OSSA_AGENT_VERSION, OSSA_AGENT_ROLE,
//     OSSA_CAPABILITIES (the names, comma-joined), the ConfigMap mounted
//     read-only at /etc/ossa/capabilities.json (a change rolls the pods:
//     config-hash annotation), cpu and memory requests (memory limit =
//     request, cpu limit = request only above the tier's default cpu
//     limit, so the LimitRange's default never falls below the request;
//     nvidia.com/gpu: 1 with gpu), liveness and readiness probes
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
// scale: Stalled InvalidCapabilitySchema naming the capability and field),
// the tier (below), dependencies (resolve.Dependencies over the namespace's
// Agents), the namespace's tier quota and limit range, children
// (server-side apply, skipped when the cached child already carries the
// desired hash and fields), pruning of children no longer desired, then
// the rollout. The runtime, capability and tier refusals delete every
// child. The status is written once, with server-side apply, only when it
// changed: a converged Agent costs no write, also after a restart (the
// applied hash lives in the children).
//
// Tier: an Agent runs within its namespace's tier (package tiers), as a
// UserDeployment's services do: the namespace's scheduler.opsnorth.io/max-tier
// label, else --default-max-tier, for every namespace (bound, backend or
// neither); an unknown name is Stalled UnknownTier. spec.replicas and
// autoscaling.maxReplicas at most the tier's maxReplicas, cpu and memory
// requests at most its max, and a GPU only when its max has nvidia.com/gpu
// of at least 1 (the built-in tiers have none); otherwise Stalled
// TierLimitExceeded, the message naming each field and limit
// (`spec.replicas: 20 exceeds tier "free" maxReplicas 2; ...`). A scale
// (kubectl scale, the scale subresource) beyond the cap is the same
// refusal, never clamped: the children go, and a scale back within the cap
// runs the Agent again; the autoscaler stays within its checked bounds. A
// change of the label requeues the namespace's Agents.
//
// The namespace gets the tier's ResourceQuota and LimitRange, built as a
// user namespace's (render.TierQuota, render.TierLimitRange; one name per
// namespace, opsnorth-tier; the manager's field owner), before the
// children; each Agent of the namespace is an owner (not the controller),
// so the garbage collector deletes them with the last one. Where the
// UserDeployment controller keeps them (labelled scheduler.opsnorth.io/user:
// a user namespace) they are left as they are, never doubled.
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
