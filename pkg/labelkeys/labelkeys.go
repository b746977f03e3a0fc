// Package labelkeys holds the label keys and values every manager puts on the
// objects it creates, so watches, caches and cleanup can select exactly the
// suite's objects.
package labelkeys

// Keys and values common to every object a manager creates.
const (
	// ManagedBy marks objects created by the suite; value ManagedByValue.
	ManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedBy.
	ManagedByValue = "opsnorth-scheduler"
	// PartOf groups the suite's objects; value PartOfValue.
	PartOf = "app.kubernetes.io/part-of"
	// PartOfValue is the value of PartOf.
	PartOfValue = "opsnorth-scheduler"
	// Name is the application name (the image's app, or the template service).
	Name = "app.kubernetes.io/name"
	// Instance is the unique instance (the owning object's name).
	Instance = "app.kubernetes.io/instance"
	// Component is the role of the object, e.g. agent, workflow-step, web.
	Component = "app.kubernetes.io/component"

	// LegacyManagedBy, TaskID and UserID are the seed's labels, kept for the
	// dashboards and scripts that select on them.
	LegacyManagedBy = "managed-by"
	// TaskID is an AgentTask's spec.taskId on its Job and pod.
	TaskID = "task_id"
	// UserID is the owning user's id.
	UserID = "user_id"

	// Prefix of the suite's own keys.
	Prefix = "scheduler.opsnorth.io/"
	// AgentTask names the AgentTask that owns a Job or pod.
	AgentTask = Prefix + "agent-task"
	// Workflow names the Workflow that owns an AgentTask.
	Workflow = Prefix + "workflow"
	// Step names the workflow step an AgentTask runs.
	Step = Prefix + "step"
	// UserDeployment names the UserDeployment ("<namespace>.<name>") a child belongs to.
	UserDeployment = Prefix + "user-deployment"
	// Agent names the ossa.ai Agent (in the child's namespace) a child belongs to.
	Agent = Prefix + "agent"
	// Service names the template service a child belongs to.
	Service = Prefix + "service"
	// User is the owning user's id on user namespaces and their children.
	// On a ServiceAccount or Secret in a shared task namespace it names the
	// one user whose AgentTasks and Workflows may use it.
	User = Prefix + "user"
	// Tenant on a Namespace binds it to one user: every UserDeployment,
	// AgentTask and Workflow in it must carry that spec.userId. The managers
	// refuse any other, as does the shipped ValidatingAdmissionPolicy.
	Tenant = Prefix + "tenant"
	// Backend, set to BackendValue on a Namespace not bound to a tenant,
	// marks it as a platform backend's: its objects may act for the users
	// its BackendUsers annotation lists, or for any user without one. A
	// namespace neither bound nor marked admits no object with a userId.
	Backend = Prefix + "backend"
	// BackendValue is the value of Backend.
	BackendValue = "true"
	// BackendUsers, an annotation on a backend Namespace, is the
	// comma-separated list of users its objects may act for.
	BackendUsers = Prefix + "backend-users"
	// Creator, an annotation on a Workflow, is the username that created
	// it, as the opsnorth-scheduler-workflow-creator admission policy
	// recorded from the create request; approvals check it against
	// self-approval.
	Creator = Prefix + "creator"
	// MaxTier on a bound Namespace is the most generous tier its user's
	// UserDeployments may ask for (the deployments manager's
	// --default-max-tier where it is absent).
	MaxTier = Prefix + "max-tier"
	// Shared, set to SharedValue on a ServiceAccount or Secret in a shared
	// task namespace, lets every user's AgentTasks and Workflows use it.
	Shared = Prefix + "shared"
	// SharedValue is the value of Shared.
	SharedValue = "true"
	// HostClaim, set to HostClaimValue on a Lease in the deployments
	// manager's namespace, marks the Lease as one app host's claim: its
	// holder is the UserDeployment that owns the host.
	HostClaim = Prefix + "host-claim"
	// HostClaimValue is the value of HostClaim.
	HostClaimValue = "true"
)
