package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/views/probereport"
)

// probeReportMsg carries a stored probe report (and the run before it) to the probe screen.
type probeReportMsg struct {
	id        string
	rep, prev probe.Report
	hasPrev   bool
	err       error
}

// loadProbeReport reads the newest two reports of a sandbox, in a command.
func (m *Model) loadProbeReport(id string) tea.Cmd {
	db := m.opts.State
	if db == nil {
		return nil
	}
	return func() tea.Msg {
		reps, err := probe.History(db, id, 2)
		if err != nil || len(reps) == 0 {
			return probeReportMsg{id: id, err: err}
		}
		msg := probeReportMsg{id: id, rep: reps[len(reps)-1]}
		if len(reps) == 2 {
			msg.prev, msg.hasPrev = reps[0], true
		}
		return msg
	}
}

// openProbeReport shows the verdict table of a finished probe.
func (m *Model) openProbeReport(msg probeReportMsg) {
	if msg.err != nil {
		m.setStatus("probe report: " + oneLine(msg.err.Error()))
		return
	}
	v := probereport.New(msg.rep)
	if msg.hasPrev {
		v = v.WithPrevious(msg.prev)
	}
	v.Keys, v.Theme = m.keys, m.theme
	v.SetSize(m.width, m.height)
	m.probeView = &v
	m.prev, m.screen = m.screen, screenProbe
}

// updateProbe routes keys to the probe screen; esc (BackMsg) returns to where the probe started.
func (m *Model) updateProbe(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(probereport.BackMsg); ok || m.probeView == nil {
		m.probeView = nil
		m.screen = screenFleet
		if m.prev == screenDetail {
			m.screen = screenDetail
		}
		return m, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && m.keys.Is(k, "quit") {
		return m.updateProbe(probereport.BackMsg{})
	}
	model, cmd := m.probeView.Update(msg)
	v := model.(probereport.Model)
	m.probeView = &v
	return m, cmd
}
