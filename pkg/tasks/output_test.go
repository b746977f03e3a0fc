package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseOutput(t *testing.T) {
	tests := []struct {
		name    string
		message string
		want    map[string]string
	}{
		{"empty", "", nil},
		{"blank", " \n\t", nil},
		{"json object of strings", `{"a":"1","b":"two"}`, map[string]string{"a": "1", "b": "two"}},
		{"json with surrounding newline", "{\"a\":\"1\"}\n", map[string]string{"a": "1"}},
		{"empty json object", `{}`, nil},
		{"plain text", "all done\n", map[string]string{"result": "all done"}},
		{"malformed json", `{"a": "1"`, map[string]string{"result": `{"a": "1"`}},
		{"json with a number", `{"a": 1}`, map[string]string{"result": `{"a": 1}`}},
		{"json with null", `{"a": null}`, map[string]string{"result": `{"a": null}`}},
		{"json with nested object", `{"a": {"b": "c"}}`, map[string]string{"result": `{"a": {"b": "c"}}`}},
		{"json array", `["a"]`, map[string]string{"result": `["a"]`}},
		{"json string", `"a"`, map[string]string{"result": `"a"`}},
		{"json null", `null`, map[string]string{"result": `null`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseOutput(tt.message))
		})
	}
}
