// Package webhook delivers completion webhooks for AgentTasks and Workflows,
// one Service per kind with the same guarantees for both:
//
//   - off the reconcile workers: a reconcile only calls Service.Schedule;
//     attempts run on the service's own pool (--webhook-workers), at most
//     --webhook-max-per-host at a time to one receiver host, so receivers
//     that hang hold neither Job creation nor step hops;
//   - at-least-once: a delivery is retried until the receiver answers 2xx or
//     the attempts run out; each attempt is recorded in the object's status
//     after a re-read from the API server, so a delivered webhook is never
//     sent again after a restart or a leader change, and the next leader
//     resumes a backoff where the last one left it;
//   - deliveries follow Standard Webhooks (https://www.standardwebhooks.com):
//     every attempt carries the same webhook-id (also sent as
//     Idempotency-Key), so the receiver can drop duplicates, and a
//     webhook-timestamp of its own, from the Service's clock (Options.Now);
//   - when a secret is configured, webhook-signature is "v1," and the base64
//     of HMAC-SHA256(key, id + "." + timestamp + "." + body), so a captured
//     attempt cannot be replayed past the receiver's tolerance
//     (DefaultTolerance, 5 minutes, in Verify and the reference libraries);
//     the key is the base64 decoding of what follows "whsec_" in a secret
//     that starts with it, else the secret's bytes (ParseSecret). A signing
//     key that is missing, empty, not valid base64 after "whsec_" or
//     unreadable fails the attempt and sends nothing, never an unsigned
//     body, and the failure names the Secret and key, never the value.
//     Receivers check deliveries with Verify or any Standard Webhooks
//     library; X-Opsnorth-Signature, the body-only signature of earlier
//     releases, is no longer sent;
//   - backoff is exponential (Policy.Next), never a sleep on a worker;
//   - no redirects, a per-attempt timeout, the response body is discarded;
//   - an SSRF guard refuses, at dial time and on the resolved address,
//     loopback, link-local, private, CGNAT, unspecified, this-network (0/8)
//     and multicast addresses, and NAT64 addresses (64:ff9b::/96) that embed
//     one of them, unless an allowed CIDR lists them; a refused address
//     gives up at once, as no retry changes it;
//   - the same Events (WebhookDelivered, WebhookFailed, WebhookGaveUp), the
//     same WebhookDelivered condition and the same metrics
//     (opsnorth_webhook_*{kind}) for every kind.
package webhook
