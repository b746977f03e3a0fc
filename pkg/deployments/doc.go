// Package deployments holds the deployments manager's UserDeployment
// controller.
//
// A UserDeployment's children live in the user namespace <prefix>-<userId>,
// so they carry no owner references: every child is labelled managed-by,
// scheduler.opsnorth.io/user, scheduler.opsnorth.io/user-deployment
// ("<namespace>.<name>", hashed when longer than a label value allows) and,
// per service, scheduler.opsnorth.io/service; the annotation
// scheduler.opsnorth.io/user-deployment keeps the full reference, which maps
// child events back to the owner. A finalizer deletes the children (read live
// from the apiserver) before the UserDeployment goes.
//
// Reconcile is a checklist of phases: finalizer, template (or raw image),
// tier, dependsOn, hosts (reserved first labels refused, each host claimed
// with a Lease the API server admits once: hostclaims.go), namespace
// (labels, Pod Security restricted, tier quota and limit range), children
// (server-side apply, field owner opsnorth-scheduler-deployments, forced),
// pruning of children no longer desired and then of their hosts' claims,
// observation of the Deployments; the status is written once at the end,
// only when it changed.
//
// A rollout that does not finish names what blocks it, per service, in
// the Ready condition's reason and message (blocked.go, the pods' causes
// from package podcause, shared with the Agent controller; the lowest-ranked
// cause wins): the ReplicaSet cannot create pods (the Deployment's
// ReplicaFailure, classified by refusal.OfMessage: QuotaExceeded,
// AdmissionDenied, ServiceAccountNotFound, FailedCreate), a claim is not
// bound (ClaimPending with the claim's event or "names no storage class",
// ClaimLost), a pod no node takes (Unschedulable, with the scheduler's
// message and the claims waiting for it), then containers: InvalidImage,
// ImagePullFailed, ContainerConfigError, ContainerStartFailed, CrashLooping
// (with the last exit). Phase stays provisioning; a Deployment past its
// progress deadline makes it phase error, ProgressDeadlineExceeded, with
// the cause below. The apps' pods (label-selected, trimmed to what the
// decision reads) and the events of claims are watched; a pod enqueues its
// deployment only when its cause changed, so the status follows within
// the watch's latency and recovers by itself when the cause goes.
//
// Zero writes when converged: every applied child carries the annotation
// scheduler.opsnorth.io/applied-hash, a hash of the desired object. Before
// applying, the cached child is compared: same hash and every desired field
// present with the same value means nothing to do. The hash catches desired
// changes (including removed fields); the field comparison catches drift
// (edits by others) on a cache that survives restarts because it lives in
// the objects themselves.
//
// Network isolation (unless --disable-network-policies): one NetworkPolicy
// per UserDeployment selects its pods and
//   - admits ingress only from pods of the same UserDeployment and from pods
//     in the ingress controller's namespace (--ingress-controller-namespace);
//   - allows egress only to pods of the same UserDeployment, to kube-dns in
//     kube-system on port 53 (UDP and TCP), and to public addresses:
//     0.0.0.0/0 and ::/0 without RFC 1918, carrier-grade NAT, link-local
//     (cloud metadata), loopback and IPv6 private ranges. Other tenants'
//     pods and services, which have cluster-internal addresses, are out of
//     reach, as is anything else in private ranges.
//
// Secrets confined to their user: every spec.secrets[].remoteRef.key is read
// as --secret-key-prefix + key, {userId} in the prefix replaced with the
// deployment's spec.userId (default users/{userId}/). The prefix must contain
// {userId} followed by '/' or '_' (characters no user id has), so no user's
// prefix is the beginning of another's; it cannot be empty. A key must be a
// relative path of ASCII letters, digits and _+=@.- between single '/':
// absolute keys, empty, '.' and '..' (any dots-only) segments, '\', '%',
// ':' (schemes, ARNs), '?', '#', whitespace, control and non-ASCII
// characters are refused, and so are property and version values that break
// the same rules (some providers put them into a path or URL too). A refused
// reference stalls the deployment with reason SecretKeyNotAllowed and a
// message naming the field (spec.secrets[i].remoteRef.key), before the
// namespace or any child exists (render.CheckSecretRefs; the renderer checks
// again and refuses to build the ExternalSecret). The CRD refuses leading
// '/' and empty, '.' and '..' segments at admission. This holds only as long
// as the manager does; the store-side setup that holds against a compromised
// manager (per-namespace provider auth) is in the README.
//
// Prometheus scraping from another namespace therefore needs an extra policy
// by the platform; the ServiceMonitor only declares the endpoint.
package deployments
