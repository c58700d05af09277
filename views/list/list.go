// Package list is a scrollable read-only list computed by a loader off the UI goroutine (the
// `:snapshots`, `:probes` and `:specs` screens).
package list

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Loader computes the lines; it may do I/O (it runs in a command).
type Loader func() ([]string, error)

// Model is one list screen.
type Model struct {
	title  string
	load   Loader
	lines  []string
	offset int
}

// New opens a list titled title; its lines arrive from load.
func New(title string, load Loader) *Model {
	return &Model{title: title, load: load, lines: []string{"loading..."}}
}

type loadedMsg struct {
	to    *Model
	lines []string
	err   error
}

// Open runs the loader in a command.
func (m *Model) Open(*screen.Context) tea.Cmd {
	load := m.load
	return func() tea.Msg {
		lines, err := load()
		return loadedMsg{to: m, lines: lines, err: err}
	}
}

// Refresh loads again (an action may have changed what the list shows).
func (m *Model) Refresh(c *screen.Context) tea.Cmd { return m.Open(c) }

// Bindings scroll; back is the program's.
func (m *Model) Bindings() []keymap.Name { return screen.Nav }

// Update installs loaded lines and scrolls.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.to != m {
			return nil
		}
		m.lines = msg.lines
		if msg.err != nil {
			m.lines = append([]string{"error: " + msg.err.Error()}, m.lines...)
		}
	case tea.KeyPressMsg:
		m.offset = screen.Move(c.Keys, msg, m.offset, max(1, c.Height-4), len(m.lines)-1)
	}
	return nil
}

// View renders the title, the lines from the scroll offset, the status line and the footer.
func (m *Model) View(c *screen.Context) string {
	th, w, h := c.Theme, c.Width, c.Height
	out := []string{th.Title.Render(ansi.Truncate(m.title, w, "~"))}
	for i := m.offset; i < len(m.lines) && len(out) < h-2; i++ {
		out = append(out, ansi.Truncate(m.lines[i], w, "~"))
	}
	for len(out) < h-2 {
		out = append(out, "")
	}
	out = append(out, c.StatusLine(), th.Dim.Render(ansi.Truncate(screen.Hints(c.Keys.Labels(keymap.Down, keymap.Up)+" scroll", c.Hint(keymap.Back)), w, "~")))
	return strings.Join(out, "\n")
}
