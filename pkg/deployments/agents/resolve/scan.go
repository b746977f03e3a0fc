package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// scanned is what the scan found of one schema.
type scanned struct {
	// first is the value's first token: json.Delim('{') for an object,
	// a string, json.Number, bool or nil.
	first json.Token
	counts
}

// counts are how many JSON objects and booleans a schema has.
type counts struct{ objects, booleans int }

// scan reads raw as tokens, without building it, and checks that it is one
// JSON value within the bounds. before is the counts of the Agent's
// earlier schemas, for the Agent's limits.
func scan(raw []byte, before counts) (scanned, error) {
	var s scanned
	if len(raw) > MaxSchemaBytes {
		return s, fmt.Errorf("%w: %d bytes, over the limit of %d (64 KiB)", ErrSchemaTooLarge, len(raw), MaxSchemaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	depth := 0
	for seen := false; ; seen = true {
		tok, err := dec.Token()
		if err == io.EOF {
			if !seen {
				return s, errors.New("no JSON value")
			}
			return s, errors.New("not valid JSON: it ends inside a value")
		}
		if err != nil {
			return s, fmt.Errorf("not valid JSON: %w", err)
		}
		if depth == 0 {
			s.first = tok
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			if depth > MaxSchemaDepth {
				return s, fmt.Errorf("%w: over the limit of %d levels of objects and arrays", ErrSchemaTooDeep, MaxSchemaDepth)
			}
			if tok == json.Delim('{') {
				s.objects++
				if s.objects > MaxSchemaObjects {
					return s, fmt.Errorf("%w: over the limit of %d", ErrSchemaTooManyObjects, MaxSchemaObjects)
				}
				if before.objects+s.objects > MaxAgentSchemaObjects {
					return s, fmt.Errorf("%w: over the limit of %d", ErrSchemasTooManyObjects, MaxAgentSchemaObjects)
				}
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		case true, false:
			s.booleans++
			if s.booleans > MaxSchemaBooleans {
				return s, fmt.Errorf("%w: over the limit of %d true and false values", ErrSchemaTooManyBooleans, MaxSchemaBooleans)
			}
			if before.booleans+s.booleans > MaxAgentSchemaBooleans {
				return s, fmt.Errorf("%w: over the limit of %d true and false values", ErrSchemasTooManyBooleans, MaxAgentSchemaBooleans)
			}
		}
		if n, ok := tok.(json.Number); ok {
			if err := checkNumber(n); err != nil {
				return s, err
			}
		}
		if depth == 0 {
			break
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return s, errors.New("not one JSON value: data after its end")
	}
	return s, nil
}

// checkNumber bounds a number's length and decimal exponent.
func checkNumber(n json.Number) error {
	if len(n) > MaxNumberBytes {
		return fmt.Errorf("%w: %.16s... is over the limit of %d characters", ErrSchemaNumberTooLarge, n, MaxNumberBytes)
	}
	if i := strings.IndexAny(string(n), "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(string(n[i+1:]), "+"))
		if err != nil || e > MaxNumberExponent || e < -MaxNumberExponent {
			return fmt.Errorf("%w: %s is beyond the limit of an exponent of %d", ErrSchemaNumberTooLarge, n, MaxNumberExponent)
		}
	}
	return nil
}
