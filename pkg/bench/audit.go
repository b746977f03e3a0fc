package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// managerUser is the user a manager of the suite authenticates as in the
// bench (localcluster.StartManager: its packaged ServiceAccount).
func managerUser(comp string) string {
	return "system:serviceaccount:" + localcluster.ManagerNamespace + ":opsnorth-scheduler-" + comp
}

// mutatingVerbs are the audit verbs of requests that write.
var mutatingVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// AuditPolicy is the bench cluster's kube-apiserver audit policy: one event
// (at ResponseComplete, level Metadata) per mutating request of the three
// managers, nothing else, so the log costs the API server little and every
// line is a manager's write.
func AuditPolicy() []byte {
	var users []string
	for _, comp := range localcluster.Components {
		users = append(users, fmt.Sprintf("%q", managerUser(comp)))
	}
	var verbs []string
	for _, v := range mutatingVerbs {
		verbs = append(verbs, fmt.Sprintf("%q", v))
	}
	return fmt.Appendf(nil, `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: [%s]
  verbs: [%s]
- level: None
`, strings.Join(users, ", "), strings.Join(verbs, ", "))
}

// auditEvent is what the bench reads of an audit.k8s.io/v1 Event.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// readAudit decodes the complete lines of the audit log at path from byte
// offset on and returns the offset after the last one.
func readAudit(path string, offset int64) ([]auditEvent, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset, fmt.Errorf("open audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, fmt.Errorf("seek audit log: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, offset, fmt.Errorf("read audit log: %w", err)
	}
	// A line being written is left for the next read.
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	evs, err := parseAudit(data)
	return evs, offset + int64(len(data)), err
}

// parseAudit decodes JSON audit lines, skipping other stages than ResponseComplete.
func parseAudit(data []byte) ([]auditEvent, error) {
	var out []auditEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit line %.80q: %w", sc.Text(), err)
		}
		if ev.Stage == "ResponseComplete" {
			out = append(out, ev)
		}
	}
	return out, sc.Err()
}

// AuditCount is a number of mutating requests of one manager, verb,
// resource and response code.
type AuditCount struct {
	Manager string `json:"manager"`
	Verb    string `json:"verb"`
	// Resource is "<resource>[/<subresource>][.<group>]", e.g.
	// "agenttasks/status.scheduler.opsnorth.io", "events.events.k8s.io" (an
	// events.k8s.io Event), "events" (a core Event).
	Resource string `json:"resource"`
	Code     int    `json:"code"`
	Count    int    `json:"count"`
	// PerUnit is Count over the scenario's units (workflows).
	PerUnit float64 `json:"perUnit"`
}

func (c AuditCount) key() string {
	return fmt.Sprintf("%s %s %s %d", c.Manager, c.Verb, c.Resource, c.Code)
}

// tallyAudit counts evs by manager, verb, resource and code: those whose
// object mine matches in attributed, the managers' others apart. Events of
// users that are not managers (users maps user → manager) are dropped.
func tallyAudit(evs []auditEvent, users map[string]string, units int, mine func(name string) bool) (attributed, other []AuditCount) {
	in, out := map[string]*AuditCount{}, map[string]*AuditCount{}
	for _, ev := range evs {
		manager, ok := users[ev.User.Username]
		if !ok {
			continue
		}
		c := AuditCount{Manager: manager, Verb: ev.Verb}
		name := ""
		if ref := ev.ObjectRef; ref != nil {
			c.Resource, name = ref.Resource, ref.Name
			if ref.Subresource != "" {
				c.Resource += "/" + ref.Subresource
			}
			if ref.APIGroup != "" {
				c.Resource += "." + ref.APIGroup
			}
		}
		if ev.ResponseStatus != nil {
			c.Code = ev.ResponseStatus.Code
		}
		into := out
		if mine(name) {
			into = in
		}
		if prev, seen := into[c.key()]; seen {
			prev.Count++
			continue
		}
		c.Count = 1
		into[c.key()] = &c
	}
	return sortedCounts(in, units), sortedCounts(out, units)
}

func sortedCounts(m map[string]*AuditCount, units int) []AuditCount {
	out := make([]AuditCount, 0, len(m))
	for _, c := range m {
		c.PerUnit = ratio(float64(c.Count), float64(units))
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b AuditCount) int {
		return cmp.Or(cmp.Compare(a.Manager, b.Manager), cmp.Compare(b.Count, a.Count), cmp.Compare(a.key(), b.key()))
	})
	return out
}

// perManager sums counts by manager, over units; every one of managers is
// listed, 0 included.
func perManager(counts []AuditCount, units int, managers []string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range managers {
		out[m] = 0
	}
	for _, c := range counts {
		out[c.Manager] += float64(c.Count)
	}
	for m, n := range out {
		out[m] = ratio(n, float64(units))
	}
	return out
}
