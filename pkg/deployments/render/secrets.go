package render

import (
	"errors"
	"fmt"
	"strings"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// UserIDPlaceholder in a secret key prefix stands for the UserDeployment's
// spec.userId.
const UserIDPlaceholder = "{userId}"

// DefaultSecretKeyPrefix is the default of --secret-key-prefix.
const DefaultSecretKeyPrefix = "users/" + UserIDPlaceholder + "/"

// ErrSecretKeyNotAllowed is (errors.Is) the error of a remote secret
// reference that could leave the user's part of the secret store.
var ErrSecretKeyNotAllowed = errors.New("secret key not allowed")

// SecretKeyPrefix is the prefix template with userID in place of {userId}.
func SecretKeyPrefix(template, userID string) string {
	return strings.ReplaceAll(template, UserIDPlaceholder, userID)
}

// CheckSecretKeyPrefix validates a secret key prefix template. It must
// contain {userId}, and the first {userId} must be followed at once by '/'
// or '_', characters no user id has: then one user's prefix is never the
// beginning of another's ("users/alice/" is not the start of
// "users/alice-x/", as "users/alice" would be). With a user id in place it
// must be a path of allowed characters whose segments are neither empty nor
// dots only; a leading '/' (AWS Parameter Store style) is allowed.
func CheckSecretKeyPrefix(template string) error {
	if template == "" {
		return errors.New("must not be empty: it confines each user's secret keys (default " + DefaultSecretKeyPrefix + ")")
	}
	i := strings.Index(template, UserIDPlaceholder)
	if i < 0 {
		return fmt.Errorf("%q must contain %s", template, UserIDPlaceholder)
	}
	if rest := template[i+len(UserIDPlaceholder):]; rest == "" || (rest[0] != '/' && rest[0] != '_') {
		return fmt.Errorf("%q: %s must be followed by '/' or '_', which no user id contains, so that no user's prefix begins another's",
			template, UserIDPlaceholder)
	}
	// A user id has only [a-z0-9-]; any one stands for all of them.
	p := strings.TrimPrefix(SecretKeyPrefix(template, "u"), "/")
	if why, _ := pathProblem(strings.TrimSuffix(p, "/")); why != "" {
		return fmt.Errorf("%q: %s", template, why)
	}
	return nil
}

// CheckSecretRefs refuses every remote reference of secrets that could
// leave the user's prefix: keys are relative paths under it, and property
// and version, which some providers also put into a path or URL (the
// webhook provider, for one), obey the same rules. prefix is the user's
// resolved prefix, for the message. The error names each field and is
// ErrSecretKeyNotAllowed (errors.Is).
func CheckSecretRefs(secrets []v1alpha1.SecretReference, prefix string) error {
	var msgs []string
	for i, s := range secrets {
		field := fmt.Sprintf("spec.secrets[%d].remoteRef", i)
		if why, escapes := keyProblem(s.RemoteRef.Key); why != "" {
			verb := "is not allowed under"
			if escapes {
				verb = "escapes"
			}
			msgs = append(msgs, fmt.Sprintf("%s.key: %q %s the user's prefix %q: %s", field, s.RemoteRef.Key, verb, prefix, why))
		}
		for _, f := range [...]struct{ name, value string }{
			{"property", s.RemoteRef.Property}, {"version", s.RemoteRef.Version},
		} {
			if f.value == "" {
				continue
			}
			if why, _ := keyProblem(f.value); why != "" {
				msgs = append(msgs, fmt.Sprintf("%s.%s: %q is not allowed: %s", field, f.name, f.value, why))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &secretKeyError{msg: strings.Join(msgs, "; ")}
}

// secretKeyError is CheckSecretRefs' error: its message is only the
// fields' messages, and it is ErrSecretKeyNotAllowed.
type secretKeyError struct{ msg string }

func (e *secretKeyError) Error() string        { return e.msg }
func (e *secretKeyError) Is(target error) bool { return target == ErrSecretKeyNotAllowed }

// allowedKeyChars are the characters of a key, property or version besides
// ASCII letters and digits: what AWS Secrets Manager allows in names, which
// Vault, AWS Parameter Store and the Kubernetes provider also accept.
// Everything else is refused, among it '\' (a separator to some), '%'
// (decoded to '/' or '.' by URL-based providers), ':' (schemes, ARNs),
// '?', '#', '*', '~', whitespace, control characters and all non-ASCII
// (look-alike and normalizing characters).
const allowedKeyChars = "_+=@.-/"

// keyProblem says what is wrong with a key, property or version ("" when
// nothing is), and whether the problem is a path leaving its prefix.
func keyProblem(k string) (why string, escapes bool) {
	switch {
	case k == "":
		return "it is empty", false
	case k[0] == '/':
		return "an absolute key", true
	}
	return pathProblem(k)
}

// allowedKeyRune reports whether r may appear in a key: an ASCII letter or
// digit, or one of allowedKeyChars.
func allowedKeyRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(allowedKeyChars, r)
}

// pathProblem checks the characters and the segments of a relative path:
// a bad character, or a segment that is empty or dots only, which escapes.
func pathProblem(p string) (why string, escapes bool) {
	for _, r := range p {
		if !allowedKeyRune(r) {
			return fmt.Sprintf("character %q is refused (allowed: letters, digits and %q)", r, allowedKeyChars), false
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return "an empty path segment", true
		case strings.Trim(seg, ".") == "":
			return fmt.Sprintf("a %q path segment", seg), true
		}
	}
	return "", false
}
