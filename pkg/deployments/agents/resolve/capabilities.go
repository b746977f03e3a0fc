package resolve

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
)

// CapabilityError names the capability and which of its schemas is invalid.
type CapabilityError struct {
	// Capability is the capability's name.
	Capability string
	// Field is the schema's path, e.g. "spec.agent.capabilities[2].input_schema".
	Field string
	// Err is what is wrong with it.
	Err error
}

// Error says which schema is wrong and why, in at most MaxMessageBytes
// (the compiler's own account of a hostile schema can be long).
func (e *CapabilityError) Error() string {
	return conditions.Truncate(fmt.Sprintf("capability %q: %s: %v", e.Capability, e.Field, e.Err), MaxMessageBytes)
}

func (e *CapabilityError) Unwrap() error { return e.Err }

// Capabilities checks every capability's input_schema and output_schema, in
// order, and returns the first problem as a *CapabilityError, or nil.
func Capabilities(caps []ossav1.Capability) error {
	var (
		seen counts
		res  regexps
	)
	for i := range caps {
		for _, s := range []struct {
			name string
			raw  runtime.RawExtension
		}{{"input_schema", caps[i].InputSchema}, {"output_schema", caps[i].OutputSchema}} {
			n, err := checkSchema(s.raw, seen, &res)
			if err != nil {
				return &CapabilityError{
					Capability: caps[i].Name,
					Field:      fmt.Sprintf("spec.agent.capabilities[%d].%s", i, s.name),
					Err:        err,
				}
			}
			seen.objects += n.objects
			seen.booleans += n.booleans
		}
	}
	return nil
}

// checkSchema checks one schema and returns its counts.
func checkSchema(ext runtime.RawExtension, before counts, res *regexps) (counts, error) {
	var none counts
	raw := ext.Raw
	if raw == nil && ext.Object != nil {
		b, err := json.Marshal(ext.Object)
		if err != nil {
			return none, fmt.Errorf("encode: %w", err)
		}
		raw = b
	}
	if len(raw) == 0 {
		return none, errors.New("missing: want a JSON Schema object or a URI string")
	}
	s, err := scan(raw, before)
	if err != nil {
		return none, err
	}
	switch v := s.first.(type) {
	case json.Delim:
		if v != '{' {
			return none, errors.New("is an array: want a JSON Schema object or a URI string")
		}
		return s.counts, compileSchema(raw, res)
	case string:
		return s.counts, checkSchemaURI(v)
	case nil:
		return none, errors.New("is null: want a JSON Schema object or a URI string")
	case bool:
		return none, errors.New("is a boolean: want a JSON Schema object or a URI string")
	default:
		return none, errors.New("is a number: want a JSON Schema object or a URI string")
	}
}
