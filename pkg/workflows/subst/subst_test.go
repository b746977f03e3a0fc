package subst

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    []Segment
		wantErr string
	}{
		{name: "empty", value: "", want: nil},
		{name: "plain", value: "hello $ world $5 {x}", want: []Segment{{Literal: "hello $ world $5 {x}"}}},
		{name: "index", value: "a=${steps.0.output.result}!", want: []Segment{
			{Literal: "a="}, {Ref: &Ref{Kind: StepOutput, Index: 0, Key: "result"}}, {Literal: "!"},
		}},
		{name: "name", value: "${steps.fetch-data.output.url}", want: []Segment{
			{Ref: &Ref{Kind: StepOutput, Index: -1, Step: "fetch-data", Key: "url"}},
		}},
		{name: "dotted key", value: "${steps.12.output.a.b-c_d}", want: []Segment{
			{Ref: &Ref{Kind: StepOutput, Index: 12, Key: "a.b-c_d"}},
		}},
		{name: "input", value: "${inputs.REPO}${inputs.ref}", want: []Segment{
			{Ref: &Ref{Kind: Input, Index: -1, Key: "REPO"}}, {Ref: &Ref{Kind: Input, Index: -1, Key: "ref"}},
		}},
		{name: "escape", value: "$${steps.0.output.x}", want: []Segment{{Literal: "${steps.0.output.x}"}}},
		{name: "escape then ref", value: "$${${inputs.a}}", want: []Segment{
			{Literal: "${"}, {Ref: &Ref{Kind: Input, Index: -1, Key: "a"}}, {Literal: "}"},
		}},
		{name: "triple dollar", value: "$$${inputs.a}", want: []Segment{{Literal: "$${inputs.a}"}}},
		{name: "unclosed", value: "x ${steps.0.output.a", wantErr: "no closing '}'"},
		{name: "unknown root", value: "${env.HOME}", wantErr: "expected steps.<index|name>.output.<key> or inputs.<key>"},
		{name: "no output", value: "${steps.a.result}", wantErr: "expected steps.<index|name>.output.<key>"},
		{name: "empty key", value: "${inputs.}", wantErr: `invalid input key ""`},
		{name: "bad key", value: "${steps.a.output.a b}", wantErr: `invalid output key "a b"`},
		{name: "bad name", value: "${steps.Fetch.output.a}", wantErr: `invalid step name "Fetch"`},
		{name: "huge index", value: "${steps.99999999999999999999.output.a}", wantErr: "out of range"},
		{name: "empty body", value: "${}", wantErr: "expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.value)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrMalformed)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestExpand(t *testing.T) {
	outputs := map[string]map[string]string{"0": {"a": "A", "tricky": "${inputs.x}"}, "build": {"img": "r/i:1"}}
	inputs := map[string]string{"x": "X"}
	resolve := func(r Ref) (string, error) {
		if r.Kind == Input {
			if v, ok := inputs[r.Key]; ok {
				return v, nil
			}
			return "", fmt.Errorf("no input %q", r.Key)
		}
		sel := r.Step
		if r.Index >= 0 {
			sel = fmt.Sprint(r.Index)
		}
		if v, ok := outputs[sel][r.Key]; ok {
			return v, nil
		}
		return "", errors.New("missing")
	}
	tests := []struct {
		value, want, wantErr string
		limit                int
	}{
		{value: "${steps.0.output.a}-${steps.build.output.img}-${inputs.x}", want: "A-r/i:1-X"},
		{value: "${steps.0.output.a}-${steps.build.output.img}-${inputs.x}", limit: 9, want: "A-r/i:1-X"},
		{value: "${steps.0.output.a}-${steps.build.output.img}-${inputs.x}", limit: 8, wantErr: "expansion too large: more than 8 bytes"},
		{value: "0123456789", limit: 9, wantErr: "expansion too large: more than 9 bytes"},
		{value: "$${inputs.x} is ${inputs.x}", want: "${inputs.x} is X"},
		{value: "${steps.0.output.tricky}", want: "${inputs.x}"}, // substituted values are not parsed again
		{value: "${steps.0.output.nope}", wantErr: "${steps.0.output.nope}: missing"},
		{value: "${inputs.y}", wantErr: `${inputs.y}: no input "y"`},
		{value: "${oops", wantErr: "malformed reference at offset 0: \"${oops\" has no closing '}'"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = math.MaxInt
			}
			got, err := Expand(tt.value, resolve, limit)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReferencesAndString(t *testing.T) {
	refs, err := References("${steps.3.output.k} ${steps.x.output.k} ${inputs.k} $${inputs.no}")
	require.NoError(t, err)
	var got []string
	for _, r := range refs {
		got = append(got, r.String())
	}
	assert.Equal(t, []string{"${steps.3.output.k}", "${steps.x.output.k}", "${inputs.k}"}, got)
}

func TestEscapeRender(t *testing.T) {
	for _, s := range []string{"", "${", "$${", "$$${x}", "a${inputs.b}c", "$", "}${"} {
		got, err := Expand(Escape(s), func(Ref) (string, error) { return "", errors.New("no refs expected") }, len(s))
		require.NoError(t, err, s)
		assert.Equal(t, s, got)
	}
	segs, err := Parse("a$${b${steps.1.output.c}$d")
	require.NoError(t, err)
	assert.Equal(t, "a$${b${steps.1.output.c}$d", Render(segs))
}

func TestExpandStopsAtTheLimit(t *testing.T) {
	big := strings.Repeat("x", 32<<10)
	value := strings.Repeat("${inputs.big}", 2500) // 80 MiB if expanded in full
	resolved := 0
	resolve := func(Ref) (string, error) { resolved++; return big, nil }

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Expand(value, resolve, 32<<10)
	runtime.ReadMemStats(&after)

	require.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, 2, resolved, "the second reference does not fit, and nothing after it is resolved")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "memory is bounded by the limit, not the expansion")
}

func TestSize(t *testing.T) {
	size := func(r Ref) int {
		if r.Kind == Input {
			return 100
		}
		return 0
	}
	tests := []struct {
		value string
		want  int
	}{
		{value: "", want: 0},
		{value: "abc$${", want: 5},
		{value: "a${inputs.x}b${steps.0.output.k}", want: 102},
		{value: strings.Repeat("${inputs.x}", 3), want: 300},
	}
	for _, tt := range tests {
		segs, err := Parse(tt.value)
		require.NoError(t, err, tt.value)
		assert.Equal(t, tt.want, Size(segs, size), tt.value)
	}
	segs, err := Parse("${inputs.a}${inputs.b}")
	require.NoError(t, err)
	assert.Equal(t, math.MaxInt, Size(segs, func(Ref) int { return math.MaxInt - 1 }), "saturates instead of overflowing")
}
