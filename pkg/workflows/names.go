package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxNameLen is the length limit of a DNS label, which AgentTask names are.
const maxNameLen = 63

// TaskName is the deterministic name of a step attempt's AgentTask:
// "<workflow>-<step>-<hash>-<attempt>", a DNS label of at most 63 characters.
// The hash (8 hex characters of the workflow and step names) keeps names of
// different workflows apart even when their dashed concatenations coincide
// ("a-b"+"c" and "a"+"b-c"), and when the readable prefix has to be cut.
func TaskName(workflow, step string, attempt int32) string {
	sum := sha256.Sum256([]byte(workflow + "/" + step))
	suffix := "-" + hex.EncodeToString(sum[:4]) + "-" + strconv.Itoa(int(attempt))
	prefix := strings.ReplaceAll(workflow, ".", "-") + "-" + step
	if len(prefix) > maxNameLen-len(suffix) {
		prefix = prefix[:maxNameLen-len(suffix)]
	}
	return strings.TrimRight(prefix, "-") + suffix
}

// labelValue returns s when it is short enough for a label value, otherwise a
// cut of it with a hash, still starting and ending with an alphanumeric.
func labelValue(s string) string {
	if len(s) <= maxNameLen {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:maxNameLen-9], "-.") + "-" + hex.EncodeToString(sum[:4])
}
