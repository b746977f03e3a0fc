package plugin

import (
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// Values of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// tone is what a piece of output means, which picks its colour.
type tone int

const (
	toneNone tone = iota
	toneGood
	toneBad
	toneActive
	toneWait
	toneMuted
	toneBold
)

// ansi are the SGR codes of the tones.
var ansi = map[tone]string{
	toneGood: "32", toneBad: "31", toneActive: "34", toneWait: "33", toneMuted: "90", toneBold: "1",
}

// style renders for a terminal (colour, symbols, box-drawing tree) or for
// anything else (plain ASCII words).
type style struct{ fancy bool }

// style decides from --color and whether Out is a terminal.
func (o *Options) style() style {
	switch o.Color {
	case colorAlways:
		return style{fancy: true}
	case colorNever:
		return style{}
	}
	f, ok := o.Out.(*os.File)
	return style{fancy: ok && term.IsTerminal(int(f.Fd()))}
}

// paint colours text for a terminal.
func (s style) paint(t tone, text string) string {
	code, ok := ansi[t]
	if !s.fancy || !ok || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// state is how a phase looks: its symbol on a terminal and its tone.
type state struct {
	symbol string
	tone   tone
}

// states maps every phase of our kinds (workflow, step, task and the
// lower-case UserDeployment phases) to how it looks.
var states = map[string]state{
	"Succeeded": {"✔", toneGood}, "ready": {"✔", toneGood}, "True": {"✔", toneGood},
	"Failed": {"✖", toneBad}, "Timeout": {"✖", toneBad}, "error": {"✖", toneBad}, "False": {"✖", toneBad},
	"Running": {"●", toneActive}, "provisioning": {"●", toneActive},
	"Pending": {"◷", toneWait}, "pending": {"◷", toneWait}, "": {"◷", toneWait}, "Unknown": {"◷", toneWait},
	"Waiting": {"⏸", toneWait}, "Suspended": {"⏸", toneWait},
	"Retrying": {"↻", toneWait},
	"Skipped":  {"○", toneMuted}, "stopped": {"○", toneMuted}, "deleting": {"○", toneMuted}, "deleted": {"○", toneMuted},
}

func stateOf(phase string) state {
	if st, ok := states[phase]; ok {
		return st
	}
	return state{symbol: "?", tone: toneNone}
}

// phase renders a phase: "✔ Succeeded" in colour on a terminal, the word
// alone otherwise ("-" when there is none yet).
func (s style) phase(phase string) string {
	word := phase
	if word == "" {
		word = "-"
	}
	if !s.fancy {
		return word
	}
	st := stateOf(phase)
	return s.paint(st.tone, st.symbol+" "+word)
}

// symbol is the phase's coloured symbol on a terminal, nothing otherwise.
func (s style) symbol(phase string) string {
	if !s.fancy {
		return ""
	}
	st := stateOf(phase)
	return s.paint(st.tone, st.symbol)
}

// ellipsis marks a cut.
func (s style) ellipsis() string {
	if s.fancy {
		return "…"
	}
	return "..."
}

// truncate keeps the first line of text, cut to at most n characters.
func (s style) truncate(text string, n int) string {
	line, _, multi := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if !multi && utf8.RuneCountInString(line) <= n {
		return line
	}
	mark := s.ellipsis()
	keep := n - utf8.RuneCountInString(mark)
	if r := []rune(line); len(r) > keep {
		line = string(r[:max(keep, 0)])
	}
	return line + mark
}
