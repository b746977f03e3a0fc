package localcluster

import (
	"fmt"
	"os"
	"strconv"
)

// auditFiles are where kube-apiserver reads its audit policy and writes its
// audit log when Options.AuditPolicy is set.
func (l layout) auditFiles() (policy, log string) {
	return l.path("audit", "policy.yaml"), l.path("audit", "audit.log")
}

// withAudit writes Options.AuditPolicy into the state directory and returns
// args plus the flags that make kube-apiserver log the audit events it
// selects as JSON lines to AuditLog. Without a policy it returns args as is.
func (c *Cluster) withAudit(args []string) ([]string, error) {
	if len(c.opts.AuditPolicy) == 0 {
		return args, nil
	}
	policy, log := c.layout.auditFiles()
	if err := os.MkdirAll(c.layout.path("audit"), 0o700); err != nil {
		return nil, fmt.Errorf("create audit dir: %w", err)
	}
	if err := os.WriteFile(policy, c.opts.AuditPolicy, 0o600); err != nil {
		return nil, fmt.Errorf("write audit policy: %w", err)
	}
	return append(args,
		"--audit-policy-file="+policy,
		"--audit-log-path="+log,
		"--audit-log-format=json",
		// Blocking (the default): an event is in the file when its response is sent.
		"--audit-log-mode=blocking",
		// Never rotate (the default rotates at 100 MB): readers keep byte offsets.
		"--audit-log-maxsize="+strconv.Itoa(1<<20),
	), nil
}

// AuditLog is the path of kube-apiserver's JSON audit log, or "" when the
// cluster was started without Options.AuditPolicy.
func (c *Cluster) AuditLog() string {
	if len(c.opts.AuditPolicy) == 0 {
		return ""
	}
	_, log := c.layout.auditFiles()
	return log
}
