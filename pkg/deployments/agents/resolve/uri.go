package resolve

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// checkSchemaURI checks a schema given by reference: an absolute http,
// https or urn URI. It is recorded, never fetched.
func checkSchemaURI(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URI: %w", err)
	}
	if !u.IsAbs() {
		return fmt.Errorf("URI %q is relative: want an absolute http, https or urn URI", s)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return fmt.Errorf("URI %q has no host", s)
		}
	case "urn":
		nid, nss, ok := strings.Cut(u.Opaque, ":")
		if !ok || nid == "" || nss == "" {
			return fmt.Errorf("URN %q is not urn:<namespace>:<name>", s)
		}
	default:
		return fmt.Errorf("URI %q has scheme %q: want http, https or urn", s, u.Scheme)
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return errors.New("URI contains whitespace")
	}
	return nil
}
