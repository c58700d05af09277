// Package alerts is the containment watch's screen: every alert (a sandbox that weakened while
// running, an exec into one) newest first, with its evidence (before → after, the event, who or
// what caused it), acknowledged by key.
package alerts

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Loaded carries the stored alerts (oldest first, as the store returns them). The program sends
// it when the screen opens and whenever the watch reports a change, to every screen.
type Loaded struct {
	Alerts []state.Alert
	Err    error
	// Agent names the Inspect agent's command behind an exec alert (by alert ID), when the
	// sandbox is linked to a sample and the times and program match.
	Agent map[uint64]string
}

// Model lists alerts newest first.
type Model struct {
	// Load reads the alerts (in a command); Ack acknowledges one (returns the command doing it).
	Load   func() tea.Msg
	Ack    func(id uint64) tea.Cmd
	alerts []state.Alert
	agent  map[uint64]string
	err    string
	cursor int
	offset int
}

// New builds the screen over load and ack.
func New(load func() tea.Msg, ack func(id uint64) tea.Cmd) *Model {
	return &Model{Load: load, Ack: ack}
}

// Open loads the alerts in a command.
func (m *Model) Open(*screen.Context) tea.Cmd { return m.Load }

// Refresh reloads (an action or an ack changed them).
func (m *Model) Refresh(*screen.Context) tea.Cmd { return m.Load }

// Bindings: scroll, acknowledge, and the sandbox actions on the alert's sandbox.
func (m *Model) Bindings() []keymap.Name {
	return append(append([]keymap.Name(nil), screen.Nav...), keymap.Ack, keymap.Quarantine, keymap.Release)
}

// Selection is the sandbox of the alert under the cursor: quarantine acts on it.
func (m *Model) Selection() keymap.Selection {
	if a, ok := m.Selected(); ok {
		return keymap.Selection{Sandbox: a.SandboxID}
	}
	return keymap.Selection{}
}

// Selected is the alert under the cursor.
func (m *Model) Selected() (state.Alert, bool) {
	if m.cursor < len(m.alerts) {
		return m.alerts[m.cursor], true
	}
	return state.Alert{}, false
}

// Alerts returns the loaded alerts, newest first.
func (m *Model) Alerts() []state.Alert { return m.alerts }

// Update folds loaded alerts in, scrolls and acknowledges.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case Loaded:
		m.err = ""
		if msg.Err != nil {
			m.err = msg.Err.Error()
			return nil
		}
		var id uint64
		if a, ok := m.Selected(); ok {
			id = a.ID
		}
		m.agent = msg.Agent
		m.alerts = make([]state.Alert, len(msg.Alerts))
		for i, a := range msg.Alerts {
			m.alerts[len(msg.Alerts)-1-i] = a
		}
		m.cursor = min(m.cursor, max(0, len(m.alerts)-1))
		for i, a := range m.alerts { // keep the cursor on the same alert as new ones arrive
			if a.ID == id {
				m.cursor = i
			}
		}
	case tea.KeyPressMsg:
		if c.Keys.Is(msg, keymap.Ack) {
			a, ok := m.Selected()
			switch {
			case !ok:
				c.SetStatus("ack: no alert selected")
			case a.Ack != nil:
				c.SetStatus(fmt.Sprintf("alert %d: acknowledged already by %s", a.ID, a.Ack.Operator))
			case m.Ack != nil:
				return m.Ack(a.ID)
			}
			return nil
		}
		m.cursor = screen.Move(c.Keys, msg, m.cursor, max(1, c.Height-10), len(m.alerts)-1)
	}
	return nil
}

// Line renders one alert in the list.
func Line(a state.Alert, w int) string {
	ack := "open"
	if a.Ack != nil {
		ack = "ack " + a.Ack.Operator
	}
	s := fmt.Sprintf("%4d %s %-8s %-5s %-24s %s  [%s]", a.ID, a.Time.UTC().Format("01-02 15:04:05"), strings.ToUpper(a.Severity.String()),
		a.Kind, ansi.Truncate(a.SandboxID, 24, "~"), a.Summary, ack)
	return ansi.Truncate(redact.Cell(s), w, "~")
}

// Evidence spells out one alert: what it was, what it is, the event and its cause.
func Evidence(a state.Alert) []string { return agentEvidence(a, "") }

// agentEvidence is Evidence with the agent's command that caused it ("" when unknown).
func agentEvidence(a state.Alert, agent string) []string {
	out := []string{fmt.Sprintf("#%d %s on %s %s", a.ID, a.Summary, a.SandboxID, a.Member)}
	if a.Before != "" || a.After != "" {
		out = append(out, "before: "+orDash(a.Before), "after:  "+orDash(a.After))
	}
	if ev := a.Event; ev != nil {
		line := fmt.Sprintf("event:  %s %s %s %s", ev.Time.UTC().Format("15:04:05.000"), ev.Kind, ev.Member, ev.Detail)
		out = append(out, line)
	}
	cause := a.Cause
	if cause == "" {
		cause = "not reported by the backend"
	}
	out = append(out, "cause:  "+cause)
	if agent != "" {
		out = append(out, "agent:  "+agent)
	}
	hook := a.Hook
	if hook == "" {
		hook = "-"
	}
	ack := "not acknowledged"
	if a.Ack != nil {
		ack = "acknowledged by " + a.Ack.Operator + " at " + a.Ack.Time.UTC().Format("2006-01-02 15:04:05") + " UTC"
	}
	return append(out, "hook:   "+hook+"   "+ack)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// View renders the list and the selected alert's evidence.
func (m *Model) View(c *screen.Context) string {
	th, w, h := c.Theme, c.Width, c.Height
	open := 0
	for _, a := range m.alerts {
		if a.Ack == nil {
			open++
		}
	}
	lines := []string{th.Title.Render(ansi.Truncate(fmt.Sprintf("alerts  (%d, %d open, newest first)", len(m.alerts), open), w, "~")),
		th.Header.Render(pad(ansi.Truncate("  ID TIME (UTC)     SEVERITY KIND  SANDBOX                  SUMMARY", w, "~"), w))}
	const evidence = 6
	body := h - 4 - evidence
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+body {
		m.offset = m.cursor - body + 1
	}
	switch {
	case m.err != "":
		lines = append(lines, th.Err.Render(ansi.Truncate(m.err, w, "~")))
	case len(m.alerts) == 0:
		lines = append(lines, th.Dim.Render("no alerts: every sandbox holds its baseline"))
	}
	for i := m.offset; i < len(m.alerts) && i < m.offset+body; i++ {
		a := m.alerts[i]
		if m.agent[a.ID] != "" { // short here: the evidence below names the call
			a.Summary = "[agent] " + a.Summary
		}
		l := pad(Line(a, w), w)
		switch {
		case i == m.cursor:
			l = th.Selected.Render(l)
		case a.Ack != nil:
			l = th.Dim.Render(l)
		default:
			l = th.Err.Render(l)
		}
		lines = append(lines, l)
	}
	for len(lines) < h-2-evidence {
		lines = append(lines, "")
	}
	lines = lines[:h-2-evidence]
	var ev []string
	if a, ok := m.Selected(); ok {
		ev = agentEvidence(a, m.agent[a.ID])
	}
	for i := 0; i < evidence; i++ {
		s := ""
		if i < len(ev) {
			s = ansi.Truncate(redact.Cell(ev[i]), w, "~")
		}
		lines = append(lines, s)
	}
	lines = append(lines, c.StatusLine())
	sel := m.Selection()
	lines = append(lines, c.Footer(sel, keymap.Ack, keymap.Quarantine, keymap.Release, keymap.Back))
	return strings.Join(lines, "\n")
}

func pad(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}
