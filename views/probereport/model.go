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
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// Mode is what the body shows.
type Mode int

const (
	ModeVerdicts Mode = iota // one row per class
	ModeAxes                 // exposed classes grouped by axis
)

// BackMsg is sent when the operator leaves the screen.
type BackMsg struct{}

// Model is the report screen.
type Model struct {
	Keys  *keymap.Map
	Theme theme.Theme

	report       probe.Report
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

// New builds the screen for report with the default keymap and the colourless theme; callers
// set Keys and Theme to match the app.
func New(report probe.Report) Model {
	m := Model{Keys: keymap.Default(), Theme: theme.Plain(), report: report, width: 80, height: 24}
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
func (m Model) WithPrevious(prev probe.Report) Model {
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

// Init does nothing: the report is already computed.
func (m Model) Init() tea.Cmd { return nil }

// Update handles keys and resizes.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
	case tea.KeyPressMsg:
		switch {
		case m.Keys.Is(msg, "up"):
			m.cursor--
		case m.Keys.Is(msg, "down"):
			m.cursor++
		case m.Keys.Is(msg, "top"):
			m.cursor = 0
		case m.Keys.Is(msg, "bottom"):
			m.cursor = len(m.rows) - 1
		case m.Keys.Is(msg, "pagedown"):
			m.cursor += m.bodyHeight()
		case m.Keys.Is(msg, "pageup"):
			m.cursor -= m.bodyHeight()
		case m.Keys.Is(msg, "expand"), m.Keys.Is(msg, "open"):
			m.showEvidence = !m.showEvidence
		case m.Keys.Is(msg, "group"):
			if m.mode == ModeVerdicts {
				m.mode = ModeAxes
			} else {
				m.mode = ModeVerdicts
			}
		case m.Keys.Is(msg, "back"):
			return m, func() tea.Msg { return BackMsg{} }
		}
		m.clamp()
	}
	return m, nil
}

// View renders the screen.
func (m Model) View() tea.View { return tea.NewView(m.Render()) }

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
