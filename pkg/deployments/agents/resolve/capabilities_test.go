package resolve

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

const okSchema = `{"type":"object","properties":{"q":{"type":"string"}}}`

// nested is depth objects {"not":{"not":...{}}}.
func nested(depth int) string {
	return strings.Repeat(`{"not":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
}

// flat is a schema of n JSON objects, one level deep.
func flat(n int) string {
	var b strings.Builder
	b.WriteString(`{"properties":{`)
	for i := range n - 2 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"p` + strconv.Itoa(i) + `":{}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		name    string
		in, out string
		field   string // "" for valid
		is      error
		text    string // in the error
	}{
		{name: "2020-12 object", in: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, out: okSchema},
		{name: "draft-07 object", in: `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}}}`, out: `{}`},
		{name: "draft-04 object", in: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, out: okSchema},
		{name: "URI strings", in: `"https://schemas.example.com/in.json"`, out: `"urn:example:agent:out"`},
		{name: "http URI with fragment", in: `"http://example.com/s.json#/defs/a"`, out: okSchema},
		{name: "pattern", in: `{"type":"string","pattern":"^[a-z0-9-]{1,63}$"}`, out: `{"patternProperties":{"^x-":{}}}`},
		{name: "invalid type", in: `{"type":12}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "invalid JSON Schema"},
		{name: "invalid in output", in: okSchema, out: `{"properties":{"a":{"minimum":"x"}}}`, field: "spec.agent.capabilities[0].output_schema"},
		{name: "unknown $schema", in: `{"$schema":"https://example.com/my-meta"}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "unsupported $schema"},
		{name: "draft-03 $schema", in: `{"$schema":"http://json-schema.org/draft-03/schema#"}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "unsupported $schema"},
		{name: "number", in: `12`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "is a number"},
		{name: "array", in: `[{}]`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "is an array"},
		{name: "null", in: `null`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "is null"},
		{name: "boolean", in: `true`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "is a boolean"},
		{name: "missing", in: ``, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "missing"},
		{name: "not JSON", in: `{"a":`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "not valid JSON"},
		{name: "two values", in: `{} {}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "data after its end"},
		{name: "relative URI", in: `"schemas/in.json"`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "relative"},
		{name: "ftp URI", in: `"ftp://example.com/in.json"`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: `scheme "ftp"`},
		{name: "file URI", in: `"file:///etc/passwd"`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: `scheme "file"`},
		{name: "http URI without host", in: `"https:///x"`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "no host"},
		{name: "bad URN", in: `"urn:x"`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", text: "urn:<namespace>:<name>"},
		{name: "oversize", in: `{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrSchemaTooLarge, text: "65536"},
		{name: "too deep", in: nested(MaxSchemaDepth + 1), out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrSchemaTooDeep, text: "64 levels"},
		{name: "too deep in arrays", in: `{"enum":[` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `]}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrSchemaTooDeep},
		{name: "deepest allowed", in: nested(MaxSchemaDepth), out: okSchema},
		{name: "too many objects", in: flat(MaxSchemaObjects + 1), out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrSchemaTooManyObjects, text: "1000"},
		{name: "most objects allowed", in: flat(MaxSchemaObjects), out: okSchema},
		{name: "remote $ref", in: `{"$ref":"https://schemas.example.com/x.json"}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrFetchRefused, text: "https://schemas.example.com/x.json"},
		{name: "file $ref", in: `{"$ref":"file:///etc/passwd"}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrFetchRefused, text: "file:///etc/passwd"},
		{name: "relative $ref", in: `{"properties":{"a":{"$ref":"defs.json#/a"}}}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrFetchRefused},
		{name: "unresolvable local $ref", in: `{"$ref":"#/$defs/none"}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema"},
		{name: "invalid pattern", in: `{"pattern":"("}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema"},
		{name: "costly patterns", in: `{"pattern":"` + strings.Repeat(`\\pL{1000}`, 80) + `"}`, out: okSchema, field: "spec.agent.capabilities[0].input_schema", is: ErrRegexpTooCostly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Capabilities([]ossav1.Capability{capability(0, tt.in, tt.out)})
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			var ce *CapabilityError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "c0", ce.Capability)
			assert.Equal(t, tt.field, ce.Field)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.text)
			assert.NotContains(t, err.Error(), schemaURL, "users never wrote the compiler's internal URL")
			assert.LessOrEqual(t, len(err.Error()), MaxMessageBytes)
			t.Log(err)
		})
	}
}

func TestCapabilitiesFirstErrorNamesItsCapability(t *testing.T) {
	caps := []ossav1.Capability{
		capability(0, okSchema, okSchema),
		capability(1, `"https://example.com/in"`, okSchema),
		capability(2, okSchema, `{"type":12}`),
		capability(3, `12`, okSchema),
	}
	err := Capabilities(caps)
	var ce *CapabilityError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "c2", ce.Capability)
	assert.Equal(t, "spec.agent.capabilities[2].output_schema", ce.Field)
	assert.True(t, strings.HasPrefix(err.Error(), `capability "c2": spec.agent.capabilities[2].output_schema: `), err.Error())
}

func TestCapabilitiesObjectsAcrossTheAgent(t *testing.T) {
	big := flat(MaxSchemaObjects)
	var caps []ossav1.Capability
	for i := range 4 {
		caps = append(caps, capability(i, big, big))
	}
	require.NoError(t, Capabilities(caps), "8000 objects in all is allowed")

	caps = append(caps, capability(4, `{}`, okSchema))
	err := Capabilities(caps)
	var ce *CapabilityError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "spec.agent.capabilities[4].input_schema", ce.Field)
	assert.ErrorIs(t, err, ErrSchemasTooManyObjects)
	assert.Contains(t, err.Error(), "8000")
}

func TestCapabilitiesNone(t *testing.T) {
	assert.NoError(t, Capabilities(nil))
}

func TestCapabilityErrorUnwrap(t *testing.T) {
	inner := errors.New("inner")
	err := error(&CapabilityError{Capability: "c", Field: "f", Err: inner})
	assert.ErrorIs(t, err, inner)
	assert.Equal(t, `capability "c": f: inner`, err.Error())
}
