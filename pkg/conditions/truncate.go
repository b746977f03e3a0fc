package conditions

import "unicode/utf8"

// Truncate cuts s to at most n bytes, on a character boundary, marking a
// cut with "…": condition messages, events and logs quote what users and
// other components wrote, which may be of any length.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	if n < len(mark) {
		return ""
	}
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
