package deployments

import (
	"fmt"
	"slices"
	"strings"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// DefaultReservedHosts are the first host labels no app may take unless
// --reserved-hosts says otherwise: names a platform or its mail, DNS and
// login services keep for themselves, the discovery names clients look up
// on their own (autodiscover, wpad, mta-sts...), and int, whose subdomain
// holds the internal hosts (<name>.int.<domain>). The admission policy's
// ConfigMap (kustomize/base/policies/reserved-hosts.yaml) and the chart's
// managers.deployments.reservedHosts hold the same list; a test keeps the
// three equal.
var DefaultReservedHosts = []string{
	"account", "accounts", "admin", "api", "assets", "auth", "autoconfig", "autodiscover",
	"billing", "cdn", "console", "cpanel", "dashboard", "dns", "ftp", "help",
	"imap", "int", "internal", "isatap", "localhost", "login", "mail", "mta-sts",
	"mx", "ns1", "ns2", "oauth", "openpgpkey", "pop", "pop3", "portal",
	"root", "smtp", "sso", "static", "status", "support", "webmail", "wpad", "www",
}

// reservedHost says which of hosts has a reserved first label, naming the
// fields that make it; "" when none has.
func reservedHost(ud *v1alpha1.UserDeployment, hosts []v1alpha1.IngressStatus, reserved []string) string {
	for i, h := range hosts {
		label, _, _ := strings.Cut(h.Host, ".")
		if !slices.Contains(reserved, label) {
			continue
		}
		if i == 0 {
			return fmt.Sprintf("metadata.name %q makes host %s, whose first label is reserved", ud.Name, h.Host)
		}
		return fmt.Sprintf("metadata.name %q and service %q make host %s, whose first label is reserved", ud.Name, h.Service, h.Host)
	}
	return ""
}
