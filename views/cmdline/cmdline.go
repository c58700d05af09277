// Package cmdline is the `:` command line: a one-line input with history (the keymap's up and
// down) drawn over the screen's last line, and a parser for the verbs the program registers
// (:sandboxes, :journal, :sort...). It knows no verbs of its own, so a new screen's verb is
// registered where the screen is.
package cmdline

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/lineedit"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// MaxHistory bounds the remembered commands.
const MaxHistory = 100

// Command is a parsed command line.
type Command struct {
	Verb string // canonical name
	Arg  string
}

// Verb is one command word with its aliases, canonical name first.
type Verb []string

// Parse turns "sort age" into Command{Verb: "sort", Arg: "age"}; unknown words are errors that
// list the verbs there are.
func Parse(line string, verbs []Verb) (Command, error) {
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), ":"))
	if len(f) == 0 {
		return Command{}, fmt.Errorf("empty command")
	}
	w := strings.ToLower(f[0])
	for _, alias := range verbs {
		for _, a := range alias {
			if a == w {
				return Command{Verb: alias[0], Arg: strings.Join(f[1:], " ")}, nil
			}
		}
	}
	var known []string
	for _, v := range verbs {
		known = append(known, ":"+v[0])
	}
	return Command{}, fmt.Errorf("unknown command %q (try %s)", f[0], strings.Join(known, " "))
}

// Model is the input line and its history; the program keeps one and pushes it on `:`.
type Model struct {
	Active   bool
	OnSubmit func(c *screen.Context, line string) tea.Cmd

	input   lineedit.Model
	history []string
	pos     int // index into history while browsing; len(history) = the fresh line
}

// Open gives the line focus with empty input.
func (m *Model) Open() { m.Active, m.input, m.pos = true, lineedit.New(""), len(m.history) }

// Input is the line being typed.
func (m *Model) Input() string { return m.input.Value() }

// SetInput replaces the line being typed.
func (m *Model) SetInput(s string) { m.input.SetValue(s) }

// History returns remembered commands, oldest first.
func (m *Model) History() []string { return append([]string(nil), m.history...) }

// Key handles one key. When the line is submitted it returns it (done=true); back closes with
// an empty line.
func (m *Model) Key(km *keymap.Map, msg tea.KeyPressMsg) (line string, done bool) {
	switch {
	case km.IsControl(msg, keymap.Back), km.IsControl(msg, keymap.Quit):
		m.Active = false
		return "", true
	case km.IsControl(msg, keymap.Open):
		m.Active = false
		line = strings.TrimSpace(m.input.Value())
		if line != "" && (len(m.history) == 0 || m.history[len(m.history)-1] != line) {
			m.history = append(m.history, line)
			if len(m.history) > MaxHistory {
				m.history = m.history[len(m.history)-MaxHistory:]
			}
		}
		return line, true
	case km.IsControl(msg, keymap.Up):
		if m.pos > 0 {
			m.pos--
			m.input.SetValue(m.history[m.pos])
		}
	case km.IsControl(msg, keymap.Down):
		if m.pos < len(m.history)-1 {
			m.pos++
			m.input.SetValue(m.history[m.pos])
		} else {
			m.pos = len(m.history)
			m.input.SetValue("")
		}
	default:
		m.input.Update(msg)
	}
	return "", false
}

// Update runs the line as a modal screen.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		m.input.Update(msg)
	case tea.KeyPressMsg:
		line, done := m.Key(c.Keys, msg)
		if !done {
			return nil
		}
		c.Pop()
		if line != "" && m.OnSubmit != nil {
			return m.OnSubmit(c, line)
		}
	}
	return nil
}

// View is the line alone; Compose draws it over the last line of the screen below.
func (m *Model) View(c *screen.Context) string {
	return screen.Fit([]string{m.line(c)}, c.Width, c.Height)
}

// Compose replaces the last line of the screen below with the input.
func (m *Model) Compose(below string, c *screen.Context) string {
	lines := strings.Split(below, "\n")
	lines[len(lines)-1] = m.line(c)
	return strings.Join(lines, "\n")
}

func (m *Model) line(c *screen.Context) string {
	return c.Theme.Key.Render(c.Keys.Label(keymap.Command)) + m.input.View(c.Theme)
}

// Typing: the line takes letters as text.
func (m *Model) Typing() bool { return true }

// Bindings are the keys the line answers (control keys only: it is typing).
func (m *Model) Bindings() []keymap.Name {
	return []keymap.Name{keymap.Open, keymap.Back, keymap.Quit, keymap.Up, keymap.Down}
}
