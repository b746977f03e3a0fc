// Package subst is the workflow input substitution engine: it parses step
// input values holding references and replaces them with step outputs and
// workflow inputs. It is pure: no I/O, no clock, no Kubernetes types.
//
// Grammar of a value:
//
//	"$${"                      a literal "${"
//	"${steps.N.output.KEY}"    output KEY of the step at 0-based index N
//	"${steps.NAME.output.KEY}" output KEY of the step named NAME
//	"${inputs.KEY}"            workflow input KEY
//	any other text             itself (a "$" not followed by "{" is literal)
//
// A step selector made only of digits is an index. NAME follows the step name
// rule (lowercase DNS label); KEY is one or more letters, digits, '_', '-' or
// '.'. Any other "${...}", or a "${" without its "}", is malformed. Values
// substituted in are inserted verbatim and never parsed again.
package subst

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is what a reference points at.
type Kind int

// Reference kinds.
const (
	// StepOutput is ${steps.N.output.KEY} or ${steps.NAME.output.KEY}.
	StepOutput Kind = iota
	// Input is ${inputs.KEY}.
	Input
)

// Ref is one well-formed reference.
type Ref struct {
	Kind Kind
	// Index is the step index of ${steps.N...}; -1 when the step is named.
	Index int
	// Step is the step name of ${steps.NAME...}; empty when indexed.
	Step string
	// Key is the output or input key.
	Key string
}

// String renders the reference as written: "${...}".
func (r Ref) String() string {
	if r.Kind == Input {
		return "${inputs." + r.Key + "}"
	}
	sel := r.Step
	if r.Index >= 0 {
		sel = strconv.Itoa(r.Index)
	}
	return "${steps." + sel + ".output." + r.Key + "}"
}

// Segment is a piece of a parsed value: literal text, or a reference.
type Segment struct {
	// Literal is the text of a literal segment (escapes already collapsed).
	Literal string
	// Ref is set for a reference segment.
	Ref *Ref
}

// ErrMalformed is wrapped by every parse error.
var ErrMalformed = errors.New("malformed reference")

// maxIndex bounds N so that it always fits an int; workflows have at most 50 steps.
const maxIndex = 1 << 20

// Parse splits value into literal and reference segments. Adjacent literal
// text is merged into one segment.
func Parse(value string) ([]Segment, error) {
	var (
		out []Segment
		lit strings.Builder
	)
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, Segment{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(value); {
		switch {
		case strings.HasPrefix(value[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(value[i:], "${"):
			end := strings.IndexByte(value[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("%w at offset %d: %q has no closing '}'", ErrMalformed, i, clip(value[i:]))
			}
			body := value[i+2 : i+2+end]
			ref, err := parseRef(body)
			if err != nil {
				return nil, fmt.Errorf("%w at offset %d: ${%s}: %w", ErrMalformed, i, clip(body), err)
			}
			flush()
			out = append(out, Segment{Ref: &ref})
			i += 2 + end + 1
		default:
			lit.WriteByte(value[i])
			i++
		}
	}
	flush()
	return out, nil
}

func parseRef(body string) (Ref, error) {
	if key, ok := strings.CutPrefix(body, "inputs."); ok {
		if !validKey(key) {
			return Ref{}, fmt.Errorf("invalid input key %q", key)
		}
		return Ref{Kind: Input, Index: -1, Key: key}, nil
	}
	rest, ok := strings.CutPrefix(body, "steps.")
	if !ok {
		return Ref{}, errors.New("expected steps.<index|name>.output.<key> or inputs.<key>")
	}
	sel, key, ok := strings.Cut(rest, ".output.")
	if !ok {
		return Ref{}, errors.New("expected steps.<index|name>.output.<key>")
	}
	if !validKey(key) {
		return Ref{}, fmt.Errorf("invalid output key %q", key)
	}
	if isDigits(sel) {
		n, err := strconv.Atoi(sel)
		if err != nil || n > maxIndex {
			return Ref{}, fmt.Errorf("step index %q out of range", sel)
		}
		return Ref{Kind: StepOutput, Index: n, Key: key}, nil
	}
	if !validStepName(sel) {
		return Ref{}, fmt.Errorf("invalid step name %q", sel)
	}
	return Ref{Kind: StepOutput, Index: -1, Step: sel, Key: key}, nil
}

// References returns the references of value in order.
func References(value string) ([]Ref, error) {
	segs, err := Parse(value)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, s := range segs {
		if s.Ref != nil {
			refs = append(refs, *s.Ref)
		}
	}
	return refs, nil
}

// Resolver returns the value of a reference, or an error naming what is missing.
type Resolver func(Ref) (string, error)

// ErrTooLarge is wrapped by Expand's error when the expansion would exceed
// its limit.
var ErrTooLarge = errors.New("expansion too large")

// Expand parses value and replaces each reference with what resolve returns.
// The result is at most limit bytes: Expand measures each piece before it
// writes it and stops, with an error wrapping ErrTooLarge, at the first one
// that would not fit, so memory never exceeds limit whatever the value
// references. The first parse, resolve or size error is returned.
func Expand(value string, resolve Resolver, limit int) (string, error) {
	segs, err := Parse(value)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range segs {
		piece := s.Literal
		if s.Ref != nil {
			if piece, err = resolve(*s.Ref); err != nil {
				return "", fmt.Errorf("%s: %w", s.Ref, err)
			}
		}
		if len(piece) > limit-b.Len() {
			return "", fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		b.WriteString(piece)
	}
	return b.String(), nil
}

// Size returns the length Expand would produce from the parsed segs when
// each reference is size(ref) bytes long, without building it. It saturates
// at math.MaxInt.
func Size(segs []Segment, size func(Ref) int) int {
	n := 0
	for _, s := range segs {
		piece := len(s.Literal)
		if s.Ref != nil {
			piece = size(*s.Ref)
		}
		n = SaturatingAdd(n, piece)
	}
	return n
}

// SaturatingAdd returns a+b for non-negative a and b, or math.MaxInt when the
// sum would overflow.
func SaturatingAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// Escape returns s written so that Expand yields s itself: every "${"
// becomes "$${".
func Escape(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// Render writes segments back as a value that parses to the same segments.
func Render(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Ref != nil {
			b.WriteString(s.Ref.String())
			continue
		}
		b.WriteString(Escape(s.Literal))
	}
	return b.String()
}

func validKey(k string) bool {
	if k == "" || len(k) > 253 {
		return false
	}
	for _, c := range []byte(k) {
		if !isAlnum(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func validStepName(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// clip shortens s for error messages.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
