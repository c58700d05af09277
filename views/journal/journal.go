// Package journal is the journal screen: the append-only audit of every action (intent and
// outcome), newest first, scrollable, optionally narrowed to one sandbox.
package journal

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// Limit is how many newest entries the screen loads.
const Limit = 1000

// Source is where the journal is read from (*state.DB; a daemon client later).
type Source interface {
	Journal(q state.JournalQuery) ([]state.Entry, error)
}

// Model holds loaded entries (newest first) and the scroll position.
type Model struct {
	Target  string // "" for every sandbox
	Err     string
	src     Source
	entries []state.Entry
	cursor  int
	offset  int
	// Running reports a sandbox with an action in flight, so its intent is not called
	// interrupted (nil: nothing is running).
	Running     func(sandboxID string) bool
	interrupted map[uint64]bool // intents without an outcome (interrupted.go)
}

// New opens the journal of target ("" for every sandbox); nil src says the journal is unavailable.
func New(src Source, target string) *Model {
	m := &Model{Target: target, src: src}
	if src == nil {
		m.Err = "no state file: the journal is unavailable"
	}
	return m
}

type loadedMsg struct {
	target  string
	entries []state.Entry
	err     error
}

// Open loads the entries in a command.
func (m *Model) Open(c *screen.Context) tea.Cmd { return m.Refresh(c) }

// Refresh reloads (an action just wrote to the journal).
func (m *Model) Refresh(*screen.Context) tea.Cmd {
	if m.src == nil {
		return nil
	}
	src, target := m.src, m.Target
	return func() tea.Msg {
		es, err := Load(src, target)
		return loadedMsg{target: target, entries: es, err: err}
	}
}

// Bindings are the scroll keys; back is the program's.
func (m *Model) Bindings() []keymap.Name { return screen.Nav }

// Selection is the sandbox of the entry under the cursor (cancel and the like act on it).
func (m *Model) Selection() keymap.Selection {
	if m.cursor < len(m.entries) {
		return keymap.Selection{Sandbox: m.entries[m.cursor].Target}
	}
	return keymap.Selection{}
}

// Update folds loaded entries in and scrolls.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.target == m.Target {
			m.SetEntries(msg.entries)
			m.Err = ""
			if msg.err != nil {
				m.Err = msg.err.Error()
			}
		}
	case tea.KeyPressMsg:
		m.Scroll(c.Keys, msg, max(1, c.Height-6))
	}
	return nil
}

// Load reads the newest entries; it does I/O and must run in a command.
func Load(db Source, target string) ([]state.Entry, error) {
	es, err := db.Journal(state.JournalQuery{Target: target, Limit: Limit})
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	return es, err
}

// SetEntries installs entries, newest first.
func (m *Model) SetEntries(es []state.Entry) {
	m.entries = es
	m.interrupted = interrupted(es, m.Running)
	m.cursor = min(m.cursor, max(0, len(es)-1))
}

// Entries returns the loaded entries, newest first.
func (m *Model) Entries() []state.Entry { return m.entries }

// Scroll moves the cursor by the keymap's navigation keys.
func (m *Model) Scroll(km *keymap.Map, msg tea.KeyPressMsg, page int) {
	m.cursor = screen.Move(km, msg, m.cursor, page, len(m.entries)-1)
}

// Line renders one entry in a fixed layout (shared with the detail view).
func Line(e state.Entry, w int) string { return line(e, w, false) }

func line(e state.Entry, w int, interrupted bool) string {
	outcome := string(e.Phase)
	if e.Phase == state.PhaseOutcome {
		outcome = e.Outcome
	}
	if interrupted {
		outcome = Interrupted
	}
	var params []string
	for _, k := range sortedKeys(e.Params) {
		if v := e.Params[k]; v != "" && v != "false" {
			params = append(params, k+"="+v)
		}
	}
	target := e.Target
	if w < 110 { // narrow: the sandbox name is enough, the backend is in the detail
		target = backends.ShortName(target)
	}
	s := fmt.Sprintf("%5d %s %-9s %-9s %s", e.Seq, e.Time.UTC().Format("01-02 15:04:05"), e.Action, outcome, target)
	if e.Error != "" {
		s += "  error: " + strings.ReplaceAll(e.Error, "\n", " ")
	}
	if len(params) > 0 {
		s += "  " + strings.Join(params, " ")
	}
	return ansi.Truncate(s, w, "~")
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// View renders the screen at the context's size.
func (m *Model) View(c *screen.Context) string {
	th, w, h := c.Theme, c.Width, c.Height
	title := "journal"
	if m.Target != "" {
		title += ": " + m.Target
	}
	lines := []string{th.Title.Render(ansi.Truncate(fmt.Sprintf("%s  (%d entries, newest first)", title, len(m.entries)), w, "~")),
		th.Header.Render(ansi.Truncate("  SEQ TIME (UTC)     ACTION    PHASE     TARGET", w, "~"))}
	body := h - 6 // title, header, two lines for the selected entry, the app's status line, footer
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+body {
		m.offset = m.cursor - body + 1
	}
	switch {
	case m.Err != "":
		lines = append(lines, th.Err.Render(ansi.Truncate(m.Err, w, "~")))
	case len(m.entries) == 0:
		lines = append(lines, th.Dim.Render("no journal entries yet"))
	}
	for i := m.offset; i < len(m.entries) && i < m.offset+body; i++ {
		e := m.entries[i]
		l := pad(line(e, w, m.interrupted[e.Seq]), w)
		switch {
		case i == m.cursor:
			l = th.Selected.Render(l)
		case m.interrupted[e.Seq]:
			l = th.Warn.Render(l)
		case e.Outcome == state.OutcomeFailed || e.Outcome == state.OutcomeRefused:
			l = th.Err.Render(l)
		case e.Outcome == state.OutcomeCancelled || e.Outcome == state.OutcomeInterrupted:
			l = th.Warn.Render(l)
		}
		lines = append(lines, l)
	}
	for len(lines) < h-4 {
		lines = append(lines, "")
	}
	lines = append(lines[:h-4], m.selectedLines(th, w)...)
	lines = append(lines, c.StatusLine())
	km := c.Keys
	lines = append(lines, th.Dim.Render(ansi.Truncate(screen.Hints(km.Labels(keymap.Down, keymap.Up)+" scroll", km.Labels(keymap.Top, keymap.Bottom)+" ends", c.Hint(keymap.Back)), w, "~")))
	return strings.Join(lines, "\n")
}

func pad(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// selectedLines spell out the cursor entry's target and error in full (two lines), since the
// table cuts them at narrow widths.
func (m *Model) selectedLines(th theme.Theme, w int) []string {
	if m.cursor >= len(m.entries) {
		return []string{"", ""}
	}
	e := m.entries[m.cursor]
	first := fmt.Sprintf("#%d %s %s by %s", e.Seq, e.Action, e.Target, e.Operator)
	second := ""
	if e.Error != "" {
		second = th.Err.Render(ansi.Truncate("error: "+strings.ReplaceAll(e.Error, "\n", " "), w, "~"))
	} else if e.Intent != 0 {
		second = fmt.Sprintf("outcome of #%d: %s", e.Intent, e.Outcome)
	} else if m.interrupted[e.Seq] {
		second = th.Warn.Render(ansi.Truncate("interrupted: no outcome was written (the process ended mid-action); `rangekeeper recover` lists what it left", w, "~"))
	}
	return []string{th.Dim.Render(ansi.Truncate(first, w, "~")), second}
}
