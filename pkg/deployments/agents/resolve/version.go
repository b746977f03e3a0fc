package resolve

import (
	"fmt"
	"regexp"

	"golang.org/x/mod/semver"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

var semverPattern = regexp.MustCompile(ossav1.SemVerPattern)

// canonical turns a version as the CRD allows it (2.0.0, no "v") into
// semver's form ("v2.0.0"), or "" if it is not one.
func canonical(s string) string {
	if !semverPattern.MatchString(s) || !semver.IsValid("v"+s) {
		return ""
	}
	return "v" + s
}

// versionRange is a required dependency's [min_version, max_version], each
// bound optional.
type versionRange struct{ min, max string }

func (r versionRange) String() string {
	switch {
	case r.min != "" && r.max != "":
		return ">=" + r.min + " <=" + r.max
	case r.min != "":
		return ">=" + r.min
	case r.max != "":
		return "<=" + r.max
	}
	return "any version"
}

// check says whether version is within the range, and if not, why.
func (r versionRange) check(id, version string) (bool, string) {
	for _, b := range []struct{ name, v string }{{"min_version", r.min}, {"max_version", r.max}} {
		if b.v != "" && canonical(b.v) == "" {
			return false, fmt.Sprintf("required agent %q: %s %q is not a semantic version", id, b.name, b.v)
		}
	}
	v := canonical(version)
	if v == "" {
		return false, fmt.Sprintf("required agent %q has version %q, which is not a semantic version", id, version)
	}
	if (r.min != "" && semver.Compare(v, "v"+r.min) < 0) || (r.max != "" && semver.Compare(v, "v"+r.max) > 0) {
		return false, fmt.Sprintf("required agent %q is at %s, outside %s", id, version, r)
	}
	return true, ""
}
