package resolve

import (
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

func TestScanLimits(t *testing.T) {
	tests := []struct {
		name string
		in   string
		is   error
		text string
	}{
		{name: "booleans", in: `{"allOf":[` + list(MaxSchemaBooleans+1, same("true")) + `]}`, is: ErrSchemaTooManyBooleans, text: "1000"},
		{name: "long number", in: `{"minimum":` + strings.Repeat("9", MaxNumberBytes+1) + `}`, is: ErrSchemaNumberTooLarge, text: "64 characters"},
		{name: "large exponent", in: `{"minimum":1e401}`, is: ErrSchemaNumberTooLarge, text: "exponent of 400"},
		{name: "small exponent", in: `{"multipleOf":1E-999999}`, is: ErrSchemaNumberTooLarge},
		{name: "huge exponent", in: `{"minimum":1e99999999999999999999}`, is: ErrSchemaNumberTooLarge},
		{name: "exponent in a value", in: `{"const":{"a":[1e500]}}`, is: ErrSchemaNumberTooLarge},
		{name: "unterminated", in: `{"a":[1,`, text: "ends inside a value"},
		{name: "whitespace only", in: ` `, text: "no JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Capabilities([]ossav1.Capability{capability(0, tt.in, okSchema)})
			var ce *CapabilityError
			require.ErrorAs(t, err, &ce)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.text)
		})
	}
	assert.NoError(t, Capabilities([]ossav1.Capability{capability(0, `{"minimum":1e400,"maximum":-1.5E+400}`, okSchema)}))
}

func TestBooleansAcrossTheAgent(t *testing.T) {
	s := `{"allOf":[` + list(MaxSchemaBooleans, same("true")) + `]}`
	var caps []ossav1.Capability
	for i := range 4 {
		caps = append(caps, capability(i, s, s))
	}
	require.NoError(t, Capabilities(caps))
	caps = append(caps, capability(4, `{"additionalProperties":false}`, okSchema))
	err := Capabilities(caps)
	require.ErrorIs(t, err, ErrSchemasTooManyBooleans)
	assert.Contains(t, err.Error(), "spec.agent.capabilities[4].input_schema")
}

func TestRegexpCost(t *testing.T) {
	cost := func(p string) int {
		re, err := syntax.Parse(p, syntax.Perl)
		require.NoError(t, err)
		return regexpCost(re)
	}
	assert.Less(t, cost(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`), 100)
	assert.Less(t, cost(`^[\p{L}\p{N} _-]{1,200}$`), 10_000)
	assert.Greater(t, cost(`\pL{1000}`), 10_000)
	assert.Greater(t, cost(`(ab{1000})*`), 1000)
}

func TestRegexpBudgetIsShared(t *testing.T) {
	// Each pattern is within the budget; together they are not.
	p := `{"pattern":"` + strings.Repeat(`\\pL{1000}`, 30) + `"}`
	var caps []ossav1.Capability
	for i := range 8 {
		caps = append(caps, capability(i, strings.Replace(p, `"}`, strings.Repeat("x", i)+`"}`, 1), okSchema))
	}
	err := Capabilities(caps[:1])
	require.NoError(t, err)
	err = Capabilities(caps)
	require.ErrorIs(t, err, ErrRegexpTooCostly)
	// The same pattern again costs nothing more.
	same := []ossav1.Capability{caps[0], caps[0], caps[0], caps[0], caps[0], caps[0], caps[0], caps[0]}
	for i := range same {
		same[i].Name = "c" + string(rune('0'+i))
	}
	assert.NoError(t, Capabilities(same))
}
