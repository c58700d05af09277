// Package timeline is the timeline screen: what happened to one sandbox, oldest first — the
// engine's events rangekeeper recorded, the journal, probe results, posture changes and the gaps
// when rangekeeper was not recording — filterable by text or source (`/backend`, `/oom`).
package timeline

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/lineedit"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Source reads a sandbox's timeline (*state.DB).
type Source interface {
	Timeline(q state.TimelineQuery) ([]state.TimelineEntry, error)
}

// Reload is how often the open screen re-reads the timeline.
var Reload = 2 * time.Second

// Model is the screen.
type Model struct {
	ID, Name string
	src      Source
	merge    Merge // merge.go
	all      []state.TimelineEntry
	shown    []state.TimelineEntry
	err      string
	cursor   int
	follow   bool // keep the newest entry selected
	filter   string
	editing  bool
	input    lineedit.Model
	loaded   time.Time
}

// New opens the timeline of sandbox id (name for the title); a nil src says it is unavailable.
func New(src Source, id, name string) *Model {
	m := &Model{ID: id, Name: name, src: src, follow: true}
	if src == nil {
		m.err = "no state file: the timeline is unavailable"
	}
	return m
}

type loadedMsg struct {
	id      string
	entries []state.TimelineEntry
	err     error
}

// Open loads the timeline in a command.
func (m *Model) Open(*screen.Context) tea.Cmd { return m.load() }

// Refresh reloads after an action (it wrote to the journal).
func (m *Model) Refresh(*screen.Context) tea.Cmd { return m.load() }

func (m *Model) load() tea.Cmd {
	if m.src == nil {
		return nil
	}
	src, id, merge := m.src, m.ID, m.merge
	return func() tea.Msg {
		es, err := src.Timeline(state.TimelineQuery{SandboxID: id, Limit: 5000})
		if merge != nil && err == nil {
			var extra []state.TimelineEntry
			extra, err = merge(id)
			es = merged(es, extra)
		}
		return loadedMsg{id: id, entries: es, err: err}
	}
}

// Subject is the sandbox shown.
func (m *Model) Subject() string { return m.ID }

// Selection is the sandbox shown.
func (m *Model) Selection() keymap.Selection { return keymap.Selection{Sandbox: m.ID} }

// Typing while the filter line has focus.
func (m *Model) Typing() bool { return m.editing }

// Bindings: scrolling and the filter; back clears the filter or leaves.
func (m *Model) Bindings() []keymap.Name {
	return append(append([]keymap.Name(nil), screen.Nav...), keymap.Open, keymap.Back, keymap.Filter)
}

// Entries are the entries shown (after the filter).
func (m *Model) Entries() []state.TimelineEntry { return m.shown }

// Update folds loads in, reloads on the clock, filters and scrolls.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.id != m.ID {
			return nil
		}
		m.loaded = c.Now
		if msg.err != nil {
			m.err = msg.err.Error()
			return nil
		}
		m.err, m.all = "", msg.entries
		m.apply()
	case screen.Tick:
		if time.Time(msg).Sub(m.loaded) >= Reload {
			m.loaded = time.Time(msg)
			return m.load()
		}
	case tea.PasteMsg:
		if m.editing {
			m.input.Update(msg)
		}
	case tea.KeyPressMsg:
		km := c.Keys
		if m.editing {
			switch {
			case km.IsControl(msg, keymap.Open):
				m.editing, m.filter = false, strings.TrimSpace(m.input.Value())
				m.apply()
			case km.IsControl(msg, keymap.Back):
				m.editing = false
			default:
				m.input.Update(msg)
			}
			return nil
		}
		switch {
		case km.Is(msg, keymap.Back):
			if m.filter != "" {
				m.filter = ""
				m.apply()
				return nil
			}
			c.Pop()
		case km.Is(msg, keymap.Filter):
			m.editing, m.input = true, lineedit.New(m.filter)
		case km.Is(msg, keymap.Open):
		default:
			m.cursor = screen.Move(km, msg, m.cursor, max(1, c.Height-5), len(m.shown)-1)
			m.follow = m.cursor == len(m.shown)-1
		}
	}
	return nil
}

// apply filters: every word must match the source, kind, member or detail (case-insensitive).
func (m *Model) apply() {
	words := strings.Fields(strings.ToLower(m.filter))
	m.shown = m.shown[:0]
	for _, e := range m.all {
		hay := strings.ToLower(e.Source + " " + e.Kind + " " + e.Member + " " + e.Actor + " " + e.Detail)
		ok := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				ok = false
				break
			}
		}
		if ok {
			m.shown = append(m.shown, e)
		}
	}
	if m.follow || m.cursor >= len(m.shown) {
		m.cursor = max(len(m.shown)-1, 0)
	}
}

// View renders the entries around the cursor.
func (m *Model) View(c *screen.Context) string {
	th, w, h := c.Theme, c.Width, c.Height
	title := fmt.Sprintf("timeline %s · %d entries", m.Name, len(m.shown))
	if m.filter != "" {
		title += fmt.Sprintf(" (of %d, filter %q)", len(m.all), m.filter)
	}
	lines := []string{th.Title.Render(ansi.Truncate(title, w, "~")),
		th.Header.Render(ansi.Truncate(fmt.Sprintf("%-19s %-11s %-18s %-22s %s", "TIME", "SOURCE", "KIND", "MEMBER", "DETAIL"), w, "~"))}
	rows := max(h-4, 1)
	if m.err != "" {
		lines = append(lines, th.Err.Render(ansi.Truncate(m.err, w, "~")))
	} else if len(m.shown) == 0 {
		lines = append(lines, th.Dim.Render("nothing recorded yet (the workbench records while it runs)"))
	}
	start := max(0, min(m.cursor-rows/2, len(m.shown)-rows))
	for i := start; i < len(m.shown) && len(lines) < rows+2; i++ {
		e := m.shown[i]
		l := fmt.Sprintf("%-19s %-11s %-18s %-22s %s", e.Time.Local().Format("01-02 15:04:05.000"), e.Source, e.Kind,
			ansi.Truncate(e.Member, 22, "~"), strings.ReplaceAll(e.Detail, "\n", " "))
		l = ansi.Truncate(l, w, "~")
		switch {
		case i == m.cursor:
			l = th.Selected.Render(l)
		case e.Kind == "oom" || e.Kind == "die" || e.Kind == "gap":
			l = th.Warn.Render(l)
		case e.Source == state.SourceJournal:
			l = th.OK.Render(l)
		case e.Source == SourceAlert:
			l = th.Err.Render(l)
		case e.Source == SourceAgent:
			l = th.Key.Render(l) // the agent's own: told apart from what the engine saw
		}
		lines = append(lines, l)
	}
	for len(lines) < h-2 {
		lines = append(lines, "")
	}
	lines = lines[:h-2]
	if m.editing {
		lines = append(lines, "/"+m.input.View(th))
	} else {
		lines = append(lines, c.StatusLine())
	}
	km := c.Keys
	lines = append(lines, th.Dim.Render(ansi.Truncate(screen.Hints(km.Labels(keymap.Down, keymap.Up)+" scroll",
		c.Hint(keymap.Filter, "filter (source, kind, member, text)"), c.Hint(keymap.Back)), w, "~")))
	return strings.Join(lines, "\n")
}
