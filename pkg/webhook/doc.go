// Package webhook delivers completion webhooks for AgentTasks and Workflows
// with the same guarantees for both:
//
//   - at-least-once: a delivery is retried until the receiver answers 2xx or
//     the attempts run out; the manager records each attempt in status, so a
//     delivered webhook is never sent again after a restart;
//   - every attempt carries the same Idempotency-Key header, so the receiver
//     can drop duplicates;
//   - the body is signed with HMAC-SHA256 when a secret is configured
//     (X-Opsnorth-Signature: sha256=<hex>);
//   - backoff is exponential and driven by the work queue (Policy.Next tells
//     the controller when to come back), never by sleeping in Reconcile;
//   - no redirects, a per-attempt timeout, the response body is discarded;
//   - an SSRF guard refuses, at dial time and on the resolved address,
//     loopback, link-local, private, CGNAT, unspecified, this-network (0/8)
//     and multicast addresses, and NAT64 addresses (64:ff9b::/96) that embed
//     one of them, unless an allowed CIDR lists them.
package webhook
