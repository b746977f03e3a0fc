package subst

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzExpand checks the engine's invariants on arbitrary values:
//   - it never panics;
//   - Escape round-trips: Expand(Escape(s)) == s, with no reference resolved;
//   - Parse and Render round-trip on every value that parses;
//   - Expand calls the resolver exactly once per reference, in order, and its
//     output is the literal segments with each reference replaced;
//   - when every reference resolves, the output holds no "${" other than the
//     ones written as "$${" escapes: nothing unresolved leaks through;
//   - the output bound: with a limit, Expand returns the same output when it
//     fits (Size predicts its length) and ErrTooLarge when it does not, and
//     never a longer result.
func FuzzExpand(f *testing.F) {
	for _, seed := range []string{
		"", "plain", "${steps.0.output.a}", "${steps.build.output.img}", "${inputs.X}", "$${inputs.X}",
		"$$${inputs.X}", "${", "${}", "${steps.0.output.}", "a${inputs.b}c$${d}e${steps.z-9.output.k.v}",
		"$", "$$", "}{$", "${steps.01.output.a}", "${steps.-a.output.b}",
	} {
		f.Add(seed)
	}
	noRefs := func(Ref) (string, error) { return "", errors.New("unexpected reference") }
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Expand(Escape(s), noRefs, len(s))
		require.NoError(t, err)
		require.Equal(t, s, got)

		segs, perr := Parse(s)
		var calls []Ref
		out, eerr := Expand(s, func(r Ref) (string, error) { calls = append(calls, r); return "<v>", nil }, math.MaxInt)
		if perr != nil {
			require.ErrorIs(t, eerr, ErrMalformed)
			require.Empty(t, calls)
			return
		}
		require.NoError(t, eerr)
		again, err := Parse(Render(segs))
		require.NoError(t, err)
		require.Equal(t, segs, again)

		var want strings.Builder
		var refs []Ref
		escaped := strings.Count(s, "$${")
		for _, seg := range segs {
			if seg.Ref != nil {
				refs = append(refs, *seg.Ref)
				want.WriteString("<v>")
				continue
			}
			want.WriteString(seg.Literal)
		}
		assert.Equal(t, want.String(), out)
		assert.Equal(t, refs, calls)
		assert.LessOrEqual(t, strings.Count(out, "${"), escaped, "unresolved reference in %q -> %q", s, out)

		assert.Equal(t, len(out), Size(segs, func(Ref) int { return len("<v>") }))
		for _, limit := range []int{0, len(out) / 2, max(len(out)-1, 0), len(out)} {
			bounded, err := Expand(s, func(Ref) (string, error) { return "<v>", nil }, limit)
			if len(out) > limit {
				require.ErrorIs(t, err, ErrTooLarge, "limit %d", limit)
				assert.Empty(t, bounded)
				continue
			}
			require.NoError(t, err)
			assert.Equal(t, out, bounded)
		}
	})
}
