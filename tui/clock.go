package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/views/screen"
)

// The program's clock: instead of a tick every second, one timer armed for the earliest moment
// something on screen changes with time alone (a screen.Clock's NextChange; every second for
// screens that are not clocks and while an action runs) or the inventory cache is due. An idle
// fleet of old sandboxes then wakes once a minute (hack/benchfleet/FINDINGS.md, item 2).

// clockMsg is the timer firing; gen tells a superseded timer (re-armed earlier) from the armed one.
type clockMsg struct {
	gen uint64
	at  time.Time
}

type clock struct {
	gen   uint64
	armed time.Time // wall time the armed timer fires (zero: none armed)
}

// minWake bounds how often the clock can wake, whatever screens ask for.
const minWake = 20 * time.Millisecond

// Update routes messages (app.go's update) and re-arms the clock for what they changed.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if c, ok := msg.(clockMsg); ok {
		if c.gen != m.clk.gen {
			return m, nil // superseded: a timer for an earlier moment replaced it
		}
		m.clk.armed = time.Time{}
		msg = tickMsg(c.at)
	}
	_, cmd := m.update(msg)
	return m, tea.Batch(cmd, m.schedule())
}

// schedule arms the timer for the next wake-up unless one at or before it is armed already.
func (m *Model) schedule() tea.Cmd {
	d := m.nextWake()
	at := time.Now().Add(d)
	if !m.clk.armed.IsZero() && !m.clk.armed.After(at) {
		return nil
	}
	m.clk.gen++
	m.clk.armed = at
	gen := m.clk.gen
	return tea.Tick(d, func(t time.Time) tea.Msg { return clockMsg{gen: gen, at: t} })
}

// nextWake is how long until something on the stack changes by the clock or the cache is due.
func (m *Model) nextWake() time.Duration {
	now := m.opts.Now()
	d := time.Hour
	for _, s := range m.stack {
		c, ok := s.(screen.Clock)
		if !ok {
			d = min(d, m.opts.Tick)
			continue
		}
		if next := c.NextChange(now); !next.IsZero() {
			d = min(d, next.Sub(now))
		}
	}
	if len(m.running) > 0 { // the status line counts the running actions' seconds
		d = min(d, m.opts.Tick)
	}
	if m.opts.SaveCache != nil {
		every := m.opts.CacheEvery
		if every <= 0 {
			every = 30 * time.Second
		}
		if m.lastSave.IsZero() {
			d = min(d, m.opts.Tick) // the first tick starts the cache's period (maybeSaveCache)
		} else {
			d = min(d, time.Until(m.lastSave.Add(every)))
		}
	}
	return max(d, minWake)
}
