package resolve

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

func chain(open, close string, depth int, leaf string) string {
	return strings.Repeat(open, depth) + leaf + strings.Repeat(close, depth)
}

func list(n int, item func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = item(i)
	}
	return strings.Join(items, ",")
}

func same(s string) func(int) string { return func(int) string { return s } }

// worstSchemas are the costliest shapes found within the bounds: as many
// subschemas as allowed, as deep as allowed, with references.
var worstSchemas = map[string]string{
	"not chains and booleans": `{"allOf":[` + list(16, same(chain(`{"not":`, `}`, 61, `true`))) + `],"anyOf":[` + list(984, same("true")) + `]}`,
	"dynamicRef chains":       `{"$dynamicAnchor":"m","allOf":[` + list(16, same(chain(`{"$dynamicRef":"#m","not":`, `}`, 61, `{}`))) + `]}`,
	"ref chains":              `{"$defs":{"x":{"$ref":"#"}},"allOf":[` + list(16, same(chain(`{"$ref":"#/$defs/x","not":`, `}`, 61, `{}`))) + `]}`,
	"refs to non-schemas":     `{"properties":{` + list(990, func(i int) string { return fmt.Sprintf(`"p%d":{"$ref":"#/properties"}`, i) }) + `}}`,
	"refs into a chain": `{"$defs":{"d":` + chain(`{"not":`, `}`, 60, `{}`) + `},"anyOf":[` +
		list(250, func(i int) string { return fmt.Sprintf(`{"$ref":"#/$defs/d%s"}`, strings.Repeat("/not", i%60)) }) + `]}`,
	"ids and anchors": `{"properties":{` + list(490, func(i int) string {
		return fmt.Sprintf(`"p%d":{"$id":"http://x/%d","$anchor":"a%d","$ref":"http://x/%d#a%d"}`, i, i, i, (i+1)%490, (i+1)%490)
	}) + `}}`,
	"objects and booleans": `{"allOf":[` + list(1000, same("true")) + `],"properties":{` + list(997, func(i int) string { return fmt.Sprintf(`"p%d":{}`, i) }) + `}}`,
	"numbers":              `{"enum":[` + list(10000, same("1e400")) + `]}`,
	"draft-07 tuples":      `{"$schema":"http://json-schema.org/draft-07/schema#","allOf":[` + list(16, same(chain(`{"items":[true,`, `]}`, 30, `{}`))) + `]}`,
}

func TestWorstSchemaCompilesInBoundedTime(t *testing.T) {
	for name, s := range worstSchemas {
		t.Run(name, func(t *testing.T) {
			require.LessOrEqual(t, len(s), MaxSchemaBytes)
			start := time.Now()
			err := Capabilities([]ossav1.Capability{capability(0, s, `{}`)})
			took := time.Since(start)
			t.Logf("%d bytes: %v", len(s), took)
			assert.NoError(t, err, "within the bounds")
			assert.Less(t, took, 2*time.Second)
		})
	}
}

func TestWorstAgentChecksInBoundedTime(t *testing.T) {
	var caps []ossav1.Capability
	for i := range 4 {
		caps = append(caps, capability(i, worstSchemas["dynamicRef chains"], worstSchemas["not chains and booleans"]))
	}
	start := time.Now()
	err := Capabilities(caps)
	took := time.Since(start)
	t.Logf("%v", took)
	assert.NoError(t, err)
	assert.Less(t, took, 10*time.Second)
}

func BenchmarkCapabilities(b *testing.B) {
	for _, name := range []string{"not chains and booleans", "dynamicRef chains", "refs to non-schemas"} {
		caps := []ossav1.Capability{capability(0, worstSchemas[name], `{}`)}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_ = Capabilities(caps)
			}
		})
	}
	caps := []ossav1.Capability{capability(0, okSchema, okSchema)}
	b.Run("typical", func(b *testing.B) {
		for b.Loop() {
			_ = Capabilities(caps)
		}
	})
}
