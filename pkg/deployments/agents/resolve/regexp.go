package resolve

import (
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// regexps compiles the patterns of one Agent's schemas, each once, and
// refuses them once their estimated cost passes MaxRegexpCost.
type regexps struct {
	spent    int
	compiled map[string]*regexp.Regexp
	// refused is the first budget refusal of the compile under way; the
	// schema compiler reports it without wrapping.
	refused error
}

func (r *regexps) compile(pattern string) (jsonschema.Regexp, error) {
	if re, ok := r.compiled[pattern]; ok {
		return re, nil
	}
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", pattern, err)
	}
	cost := regexpCost(parsed)
	if r.spent+cost > MaxRegexpCost {
		err := fmt.Errorf("%w: over the limit of %d estimated instructions for all patterns of the agent", ErrRegexpTooCostly, MaxRegexpCost)
		if r.refused == nil {
			r.refused = err
		}
		return nil, err
	}
	r.spent += cost
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", pattern, err)
	}
	if r.compiled == nil {
		r.compiled = map[string]*regexp.Regexp{}
	}
	r.compiled[pattern] = re
	return re, nil
}

// costCap keeps regexpCost from overflowing; anything at it is refused.
const costCap = 1 << 40

// regexpCost estimates the instructions re compiles to, repeats expanded,
// a character class weighing more as it has more ranges.
func regexpCost(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return max(len(re.Rune), 1)
	case syntax.OpCharClass:
		return 1 + len(re.Rune)/64
	case syntax.OpRepeat:
		n := max(re.Min, re.Max, 1)
		c := regexpCost(re.Sub[0]) + 1
		if c >= costCap/n {
			return costCap
		}
		return c * n
	}
	c := 1
	for _, sub := range re.Sub {
		c = min(c+regexpCost(sub), costCap)
	}
	return c
}
