package conditions

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTruncate(t *testing.T) {
	cases := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short stays", "short", 10, "short"},
		{"exact stays", "12345", 5, "12345"},
		{"cut with mark", "1234567890", 8, "12345…"},
		{"cut on a character boundary", "ab" + strings.Repeat("é", 4), 8, "abé…"},
		{"too small for the mark", "1234567890", 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Truncate(c.in, c.n)
			assert.Equal(t, c.want, got)
			assert.LessOrEqual(t, len(got), c.n)
			assert.True(t, utf8.ValidString(got))
		})
	}
}
