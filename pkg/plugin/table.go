package plugin

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// sgr matches the colour codes style.paint writes, which take no room.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// width is the number of columns text takes on a terminal: its characters
// without colour codes (our symbols and tree lines are one column each).
func width(text string) int { return utf8.RuneCountInString(sgr.ReplaceAllString(text, "")) }

// table lays out rows in columns two spaces apart, like kubectl get; cells
// may be coloured.
type table struct{ rows [][]string }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	var widths []int
	for _, row := range t.rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], width(cell))
		}
	}
	var b strings.Builder
	for _, row := range t.rows {
		var line strings.Builder
		for i, cell := range row {
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-width(cell)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summary writes "Label:  value" lines with the values aligned, skipping
// empty values.
type summary struct{ rows [][2]string }

func (f *summary) add(label, value string) {
	if value != "" {
		f.rows = append(f.rows, [2]string{label, value})
	}
}

func (f *summary) write(w io.Writer) error {
	n := 0
	for _, r := range f.rows {
		n = max(n, len(r[0]))
	}
	var b strings.Builder
	for _, r := range f.rows {
		fmt.Fprintf(&b, "%-*s  %s\n", n+1, r[0]+":", r[1])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
