package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestCheckSecretRefs(t *testing.T) {
	const prefix = "users/alice/"
	key := func(k string) []v1alpha1.SecretReference {
		return []v1alpha1.SecretReference{{Name: "A", RemoteRef: v1alpha1.RemoteSecretReference{Key: k}}}
	}
	escapes := func(k, why string) string {
		return `spec.secrets[0].remoteRef.key: "` + k + `" escapes the user's prefix "users/alice/": ` + why
	}
	char := func(k, c string) string {
		return `spec.secrets[0].remoteRef.key: ` + k + ` is not allowed under the user's prefix "users/alice/": character ` + c +
			` is refused (allowed: letters, digits and "_+=@.-/")`
	}
	tests := []struct {
		name    string
		secrets []v1alpha1.SecretReference
		want    string // "" when allowed
	}{
		{name: "no secrets"},
		{name: "plain key", secrets: key("db")},
		{name: "nested key", secrets: key("shop/prod/db")},
		{name: "every allowed character", secrets: key("a.b/C-d_e+f=g@h9")},
		{name: "dot file", secrets: key(".env")},
		{name: "dots inside a segment", secrets: key("a..b/c...")},
		{name: "property and version", secrets: []v1alpha1.SecretReference{{Name: "A",
			RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Property: ".dockerconfigjson", Version: "uuid/1f2e-3d"}}}},
		{name: "gjson property", secrets: []v1alpha1.SecretReference{{Name: "A",
			RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Property: "credentials.password"}}}},

		{name: "parent", secrets: key("../bob/db"), want: escapes("../bob/db", `a ".." path segment`)},
		{name: "only parent", secrets: key(".."), want: escapes("..", `a ".." path segment`)},
		{name: "parent after a segment", secrets: key("a/../../bob/db"), want: escapes("a/../../bob/db", `a ".." path segment`)},
		{name: "trailing parent", secrets: key("db/.."), want: escapes("db/..", `a ".." path segment`)},
		{name: "current", secrets: key("./db"), want: escapes("./db", `a "." path segment`)},
		{name: "current inside", secrets: key("a/./b"), want: escapes("a/./b", `a "." path segment`)},
		{name: "dots only", secrets: key("a/.../b"), want: escapes("a/.../b", `a "..." path segment`)},
		{name: "absolute", secrets: key("/users/bob/db"), want: escapes("/users/bob/db", "an absolute key")},
		{name: "root", secrets: key("/"), want: escapes("/", "an absolute key")},
		{name: "empty segment", secrets: key("a//b"), want: escapes("a//b", "an empty path segment")},
		{name: "trailing slash", secrets: key("db/"), want: escapes("db/", "an empty path segment")},
		{name: "empty", secrets: key(""), want: `spec.secrets[0].remoteRef.key: "" is not allowed under the user's prefix "users/alice/": it is empty`},

		{name: "backslash parent", secrets: key(`..\bob\db`), want: char(`"..\\bob\\db"`, `'\\'`)},
		{name: "percent-encoded dots", secrets: key("%2e%2e/bob/db"), want: char(`"%2e%2e/bob/db"`, `'%'`)},
		{name: "percent-encoded slash", secrets: key("x%2f..%2fbob"), want: char(`"x%2f..%2fbob"`, `'%'`)},
		{name: "scheme", secrets: key("vault://users/bob/db"), want: char(`"vault://users/bob/db"`, `':'`)},
		{name: "https URL", secrets: key("https://evil.example/db"), want: char(`"https://evil.example/db"`, `':'`)},
		{name: "AWS ARN", secrets: key("arn:aws:secretsmanager:eu-west-1:1:secret:bob"),
			want: char(`"arn:aws:secretsmanager:eu-west-1:1:secret:bob"`, `':'`)},
		{name: "query", secrets: key("db?version=1"), want: char(`"db?version=1"`, `'?'`)},
		{name: "fragment", secrets: key("db#/../bob"), want: char(`"db#/../bob"`, `'#'`)},
		{name: "glob", secrets: key("*"), want: char(`"*"`, `'*'`)},
		{name: "home", secrets: key("~bob/db"), want: char(`"~bob/db"`, `'~'`)},
		{name: "space", secrets: key(" db"), want: char(`" db"`, `' '`)},
		{name: "NUL", secrets: key("db\x00/../bob"), want: char(`"db\x00/../bob"`, `'\x00'`)},
		{name: "newline", secrets: key("db\n"), want: char(`"db\n"`, `'\n'`)},
		{name: "tab", secrets: key("a\tb"), want: char(`"a\tb"`, `'\t'`)},
		{name: "DEL", secrets: key("db\x7f"), want: char(`"db\x7f"`, `'\x7f'`)},
		{name: "fullwidth dots", secrets: key("．．/bob"), want: char(`"．．/bob"`, `'．'`)},
		{name: "division slash", secrets: key("..∕bob"), want: char(`"..∕bob"`, `'∕'`)},
		{name: "right-to-left override", secrets: key("db\u202e"), want: char(`"db\u202e"`, `'\u202e'`)},
		{name: "invalid UTF-8", secrets: key("db\xff"), want: char(`"db\xff"`, `'�'`)},

		{name: "property parent", secrets: []v1alpha1.SecretReference{{Name: "A",
			RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Property: "../../bob/db"}}},
			want: `spec.secrets[0].remoteRef.property: "../../bob/db" is not allowed: a ".." path segment`},
		{name: "property absolute", secrets: []v1alpha1.SecretReference{{Name: "A",
			RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Property: "/bob"}}},
			want: `spec.secrets[0].remoteRef.property: "/bob" is not allowed: an absolute key`},
		{name: "property backslash", secrets: []v1alpha1.SecretReference{{Name: "A",
			RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Property: `a\..`}}},
			want: `spec.secrets[0].remoteRef.property: "a\\.." is not allowed: character '\\' is refused (allowed: letters, digits and "_+=@.-/")`},
		{name: "version parent", secrets: []v1alpha1.SecretReference{{Name: "A",
			RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Version: "../../bob/db"}}},
			want: `spec.secrets[0].remoteRef.version: "../../bob/db" is not allowed: a ".." path segment`},
		{name: "version query", secrets: []v1alpha1.SecretReference{{Name: "A",
			RemoteRef: v1alpha1.RemoteSecretReference{Key: "db", Version: "1?x=y"}}},
			want: `spec.secrets[0].remoteRef.version: "1?x=y" is not allowed: character '?' is refused (allowed: letters, digits and "_+=@.-/")`},

		{name: "every bad field, in order", secrets: []v1alpha1.SecretReference{
			{Name: "A", RemoteRef: v1alpha1.RemoteSecretReference{Key: "ok"}},
			{Name: "B", RemoteRef: v1alpha1.RemoteSecretReference{Key: "ok", Property: "..", Version: "."}},
			{Name: "C", RemoteRef: v1alpha1.RemoteSecretReference{Key: "../bob/db"}},
		}, want: `spec.secrets[1].remoteRef.property: ".." is not allowed: a ".." path segment; ` +
			`spec.secrets[1].remoteRef.version: "." is not allowed: a "." path segment; ` +
			`spec.secrets[2].remoteRef.key: "../bob/db" escapes the user's prefix "users/alice/": a ".." path segment`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecretRefs(tt.secrets, prefix)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSecretKeyNotAllowed)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestCheckSecretKeyPrefix(t *testing.T) {
	tests := []struct {
		template string
		want     string // "" when valid
	}{
		{template: DefaultSecretKeyPrefix},
		{template: "/users/{userId}/"},
		{template: "tenants/{userId}/apps/"},
		{template: "{userId}/"},
		{template: "users_{userId}_"},
		{template: "kv/{userId}/{userId}/"},

		{template: "", want: "must not be empty"},
		{template: "users/", want: `"users/" must contain {userId}`},
		{template: "users/{userid}/", want: "must contain {userId}"},
		{template: "users/{userId}", want: "{userId} must be followed by '/' or '_'"},
		{template: "users/{userId}-x/", want: "{userId} must be followed by '/' or '_'"},
		{template: "users/{userId}x/", want: "{userId} must be followed by '/' or '_'"},
		{template: "users//{userId}/", want: "an empty path segment"},
		{template: "users/{userId}//", want: "an empty path segment"},
		{template: "//{userId}/", want: "an empty path segment"},
		{template: "../{userId}/", want: `a ".." path segment`},
		{template: "users/./{userId}/", want: `a "." path segment`},
		{template: "users/{user}/{userId}/", want: "character '{' is refused"},
		{template: "vault:{userId}/", want: "character ':' is refused"},
		{template: `users\{userId}/`, want: `character '\\' is refused`},
		{template: "users/{userId}/ ", want: "character ' ' is refused"},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			err := CheckSecretKeyPrefix(tt.template)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestSecretKeyPrefix(t *testing.T) {
	assert.Equal(t, "users/alice/", SecretKeyPrefix(DefaultSecretKeyPrefix, "alice"))
	assert.Equal(t, "kv/bob/x/bob/", SecretKeyPrefix("kv/{userId}/x/{userId}/", "bob"))
}

func TestExternalSecret(t *testing.T) {
	ud := makeUD("shop").template("web-app").secret("DB", "shop/db").obj()
	ud.Spec.Secrets = append(ud.Spec.Secrets, v1alpha1.SecretReference{Name: "KEY",
		RemoteRef: v1alpha1.RemoteSecretReference{Key: "stripe", Version: "3"}})
	a := app(t, ud, webApp())

	c, err := ExternalSecret(a, opts())
	require.NoError(t, err)
	assert.Equal(t, "shop-secrets", c.Name)
	assert.Equal(t, map[string]any{"kind": "ClusterSecretStore", "name": "vault"}, field(t, c, "spec", "secretStoreRef"))
	assert.Equal(t, []any{
		map[string]any{"secretKey": "DB", "remoteRef": map[string]any{"key": "users/alice/shop/db", "property": "p"}},
		map[string]any{"secretKey": "KEY", "remoteRef": map[string]any{"key": "users/alice/stripe", "version": "3"}},
	}, field(t, c, "spec", "data"))

	o := opts()
	o.SecretKeyPrefix = "/tenants/{userId}/apps/"
	c, err = ExternalSecret(a, o)
	require.NoError(t, err)
	assert.Equal(t, "/tenants/alice/apps/shop/db", field(t, c, "spec", "data").([]any)[0].(map[string]any)["remoteRef"].(map[string]any)["key"])

	ud.Spec.Secrets[1].RemoteRef.Key = "../bob/db"
	_, err = ExternalSecret(a, opts())
	require.ErrorIs(t, err, ErrSecretKeyNotAllowed)
	assert.Equal(t, `spec.secrets[1].remoteRef.key: "../bob/db" escapes the user's prefix "users/alice/": a ".." path segment`, err.Error())

	o.SecretKeyPrefix = ""
	_, err = ExternalSecret(app(t, makeUD("shop").template("web-app").secret("DB", "db").obj(), webApp()), o)
	require.ErrorIs(t, err, ErrSecretKeyNotAllowed, "no ExternalSecret without a prefix")
	assert.Contains(t, err.Error(), "must not be empty")
}
