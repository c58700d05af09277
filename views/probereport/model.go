// Package probereport is the escape-probe report screen: the verdict per escape class (worst
// first), the exposed classes grouped by axis, the changes since the previous run, and the raw
// evidence of the selected class on demand. It renders a report it is given and does no I/O.
package probereport

import (
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// Mode is what the body shows.
type Mode int

const (
	ModeVerdicts Mode = iota // one row per class
	ModeAxes                 // exposed classes grouped by axis
)

// Model is the report screen.
type Model struct {
	Keys  *keymap.Map
	Theme theme.Theme

	report       probe.Report
	verify       *verify.Result    // set when the report is a verify run's (ForVerify)
	rows         []verdict.Verdict // sorted worst first
	changes      []probe.Change
	lastProbed   time.Time // previous run's time, zero when this is the first
	mode         Mode
	showEvidence bool
	cursor       int
	offset       int
	width        int
	height       int
}

// New builds the screen for report with the default keymap and the colourless theme; View
// takes the program's.
func New(report probe.Report) *Model {
	m := &Model{Keys: keymap.Default(), Theme: theme.Plain(), report: report, width: 80, height: 24}
	m.rows = append(m.rows, report.Verdicts.Classes...)
	sort.SliceStable(m.rows, func(i, j int) bool {
		a, b := m.rows[i], m.rows[j]
		if statusRank[a.Status] != statusRank[b.Status] {
			return statusRank[a.Status] < statusRank[b.Status]
		}
		return a.Severity > b.Severity
	})
	return m
}

var statusRank = map[verdict.Status]int{verdict.Exposed: 0, verdict.Unknown: 1, verdict.Mitigated: 2, verdict.NotApplicable: 3}

// WithPrevious adds the previous run, so the screen shows "last probed" and what changed.
func (m *Model) WithPrevious(prev probe.Report) *Model {
	m.lastProbed = prev.Time
	m.changes = probe.Diff(prev, m.report)
	return m
}

// SetSize sets the drawing area.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(w, 20), max(h, 5)
	m.clamp()
}

// Report is the report shown.
func (m Model) Report() probe.Report { return m.report }

// Bindings are the keys the report answers; back leaves it.
func (m *Model) Bindings() []keymap.Name {
	return []keymap.Name{keymap.Up, keymap.Down, keymap.Top, keymap.Bottom, keymap.PageDown, keymap.PageUp,
		keymap.Expand, keymap.Open, keymap.Group, keymap.Back}
}

// Selection is the probed sandbox (cancel and the like act on it).
func (m *Model) Selection() keymap.Selection { return keymap.Selection{Sandbox: m.report.SandboxID} }

// Update handles keys.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	km := c.Keys
	m.Keys = km
	switch {
	case km.Is(k, keymap.Up):
		m.cursor--
	case km.Is(k, keymap.Down):
		m.cursor++
	case km.Is(k, keymap.Top):
		m.cursor = 0
	case km.Is(k, keymap.Bottom):
		m.cursor = len(m.rows) - 1
	case km.Is(k, keymap.PageDown):
		m.cursor += m.bodyHeight()
	case km.Is(k, keymap.PageUp):
		m.cursor -= m.bodyHeight()
	case km.Is(k, keymap.Expand), km.Is(k, keymap.Open):
		m.showEvidence = !m.showEvidence
	case km.Is(k, keymap.Group):
		if m.mode == ModeVerdicts {
			m.mode = ModeAxes
		} else {
			m.mode = ModeVerdicts
		}
	case km.Is(k, keymap.Back):
		c.Pop()
	}
	m.clamp()
	return nil
}

// View renders the report at the context's size with its keys and theme.
func (m *Model) View(c *screen.Context) string {
	m.Keys, m.Theme = c.Keys, c.Theme
	m.SetSize(c.Width, c.Height)
	return m.Render()
}

func (m *Model) clamp() {
	if m.cursor >= len(m.rows) {
		m.cursor = len(m.rows) - 1
	}
	if m.cursor < 0 {
		m.cursor = 0
	}
	h := m.bodyHeight()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	if m.offset < 0 {
		m.offset = 0
	}
}

// Selected is the class under the cursor.
func (m Model) Selected() (verdict.Verdict, bool) {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return verdict.Verdict{}, false
	}
	return m.rows[m.cursor], true
}

func worstLabel(s catalog.Severity) string {
	if s == catalog.SeverityNone {
		return "none"
	}
	return s.String()
}
