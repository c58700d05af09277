// Package cmdline is the `:` command line: a one-line input with history (up/down) and a parser
// for rangekeeper's nouns (:sandboxes, :docker, :journal...) and verbs (:sort, :group, :q).
package cmdline

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// MaxHistory bounds the remembered commands.
const MaxHistory = 100

// Command is a parsed command line.
type Command struct {
	Verb string // canonical noun or verb
	Arg  string
}

// Nouns and verbs with their aliases, canonical name first.
var words = [][]string{
	{"sandboxes", "sb", "fleet"},
	{"docker"},
	{"k8s", "kubernetes"},
	{"pve", "proxmox"},
	{"journal", "j"},
	{"snapshots", "snap"},
	{"probes", "probe"},
	{"specs", "spec", "author"},
	{"tasks"},
	{"sort"},
	{"group"},
	{"filter"},
	{"help"},
	{"q", "quit"},
}

// Parse turns "sort age" into Command{Verb: "sort", Arg: "age"}; unknown words are errors.
func Parse(line string) (Command, error) {
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), ":"))
	if len(f) == 0 {
		return Command{}, fmt.Errorf("empty command")
	}
	w := strings.ToLower(f[0])
	for _, alias := range words {
		for _, a := range alias {
			if a == w {
				return Command{Verb: alias[0], Arg: strings.Join(f[1:], " ")}, nil
			}
		}
	}
	return Command{}, fmt.Errorf("unknown command %q (try :sandboxes :docker :k8s :pve :journal :snapshots :probes :specs :sort :group :q)", f[0])
}

// Model is the input line. Active reports whether it has focus.
type Model struct {
	Active  bool
	Input   string
	history []string
	pos     int // index into history while browsing; len(history) = the fresh line
}

// Open gives the line focus with empty input.
func (m *Model) Open() { m.Active, m.Input, m.pos = true, "", len(m.history) }

// History returns remembered commands, oldest first.
func (m *Model) History() []string { return append([]string(nil), m.history...) }

// Update handles one key. When enter is pressed it returns the submitted line (done=true);
// esc closes with an empty line.
func (m *Model) Update(msg tea.KeyPressMsg) (line string, done bool) {
	switch msg.String() {
	case "esc", "ctrl+c":
		m.Active = false
		return "", true
	case "enter":
		m.Active = false
		line = strings.TrimSpace(m.Input)
		if line != "" && (len(m.history) == 0 || m.history[len(m.history)-1] != line) {
			m.history = append(m.history, line)
			if len(m.history) > MaxHistory {
				m.history = m.history[len(m.history)-MaxHistory:]
			}
		}
		return line, true
	case "up":
		if m.pos > 0 {
			m.pos--
			m.Input = m.history[m.pos]
		}
	case "down":
		if m.pos < len(m.history)-1 {
			m.pos++
			m.Input = m.history[m.pos]
		} else {
			m.pos, m.Input = len(m.history), ""
		}
	case "backspace":
		if r := []rune(m.Input); len(r) > 0 {
			m.Input = string(r[:len(r)-1])
		}
	case "ctrl+u":
		m.Input = ""
	default:
		if msg.Text != "" {
			m.Input += msg.Text
		}
	}
	return "", false
}
