package resolve

import "errors"

// Bounds on the capability schemas, checked by a streaming scan before any
// schema is compiled: the compiler's time grows faster than the size of its
// input, so these keep one Agent's worst case to a fraction of a second.
const (
	// MaxSchemaBytes is the largest input_schema or output_schema.
	MaxSchemaBytes = 64 << 10
	// MaxSchemaDepth is the deepest nesting of JSON objects and arrays.
	MaxSchemaDepth = 64
	// MaxSchemaObjects is the most JSON objects in one schema.
	MaxSchemaObjects = 1000
	// MaxSchemaBooleans is the most true and false values in one schema:
	// each may be a subschema, and the compiler's work grows with the
	// square of the subschemas (12000 booleans take over a second).
	MaxSchemaBooleans = 1000
	// MaxAgentSchemaObjects is the most JSON objects in all of an Agent's
	// schemas together, and MaxAgentSchemaBooleans the most booleans.
	MaxAgentSchemaObjects  = 8000
	MaxAgentSchemaBooleans = 8000
	// MaxNumberBytes and MaxNumberExponent bound each number: the
	// compiler reads numbers as exact rationals, and 1e999999 takes 30 ms.
	MaxNumberBytes    = 64
	MaxNumberExponent = 400
	// MaxRegexpCost bounds the regular expressions (pattern and
	// patternProperties) of all of an Agent's schemas together, in
	// estimated compiled instructions, repeats expanded: Go's regexp
	// matches in linear time but compiles \pL{1000} to a thousand large
	// instructions, and 64 KiB of those takes over 100 ms.
	MaxRegexpCost = 1_000_000
)

// Errors a *CapabilityError wraps when a schema is over a bound, or refers
// to a schema elsewhere.
var (
	ErrSchemaTooLarge         = errors.New("schema too large")
	ErrSchemaTooDeep          = errors.New("schema nested too deep")
	ErrSchemaTooManyObjects   = errors.New("schema has too many JSON objects")
	ErrSchemasTooManyObjects  = errors.New("the agent's schemas have too many JSON objects together")
	ErrSchemaTooManyBooleans  = errors.New("schema has too many booleans")
	ErrSchemasTooManyBooleans = errors.New("the agent's schemas have too many booleans together")
	ErrSchemaNumberTooLarge   = errors.New("schema number too large")
	ErrRegexpTooCostly        = errors.New("regular expressions too costly")
	ErrFetchRefused           = errors.New("schemas are never fetched")
)
