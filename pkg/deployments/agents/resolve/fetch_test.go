package resolve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

func TestSchemasAreNeverFetched(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()

	refusals := map[string]string{
		"$ref":               `{"$ref":"` + srv.URL + `/s.json"}`,
		"nested $ref":        `{"properties":{"a":{"items":{"$ref":"` + srv.URL + `/s.json#/defs/a"}}}}`,
		"relative to an $id": `{"$id":"` + srv.URL + `/root.json","properties":{"a":{"$ref":"other.json"}}}`,
		"$dynamicRef":        `{"$dynamicRef":"` + srv.URL + `/s.json#meta"}`,
		"draft-07 $ref":      `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$ref":"` + srv.URL + `/a.json"}},"properties":{"x":{"$ref":"#/definitions/a"}}}`,
	}
	for name, s := range refusals {
		t.Run(name, func(t *testing.T) {
			err := Capabilities([]ossav1.Capability{capability(0, s, okSchema)})
			require.ErrorIs(t, err, ErrFetchRefused)
			assert.Contains(t, err.Error(), srv.URL)
		})
	}
	t.Run("$schema", func(t *testing.T) {
		err := Capabilities([]ossav1.Capability{capability(0, `{"$schema":"`+srv.URL+`/meta"}`, okSchema)})
		assert.ErrorContains(t, err, "unsupported $schema")
	})
	t.Run("URI string", func(t *testing.T) {
		assert.NoError(t, Capabilities([]ossav1.Capability{capability(0, `"`+srv.URL+`/in.json"`, `"`+srv.URL+`/out.json"`)}))
	})
	assert.Zero(t, requests.Load(), "the schema server was asked")
}

func TestSchemasAreNeverRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"type":"string"}`), 0o600))
	for _, ref := range []string{"file:///etc/passwd", "file://" + path, path} {
		t.Run(ref, func(t *testing.T) {
			err := Capabilities([]ossav1.Capability{capability(0, `{"$ref":"`+ref+`"}`, okSchema)})
			var ce *CapabilityError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, ErrFetchRefused)
		})
	}
}
