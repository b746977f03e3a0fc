// Package v1 holds the ossa.ai/v1 API: Agent, an agent described by the
// OSSA 1.0 schema (ossaVersion "1.0", its agent object with OSSA's own
// snake_case field names) and run as a long-lived workload, plus the fields
// OSSA leaves out that a Kubernetes workload needs (replicas, autoscaling,
// port), outside spec.agent.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=ossa.ai
package v1
