package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/alerts"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/watch"
)

// watchState is what the workbench shows of the containment watch: the open alerts (the header
// line, the row marks) and the quarantined sandboxes (marked in every view).
type watchState struct {
	open        []state.Alert
	bySandbox   map[string]int
	quarantined map[string]state.QuarantineRecord
	errs        []string
	read        watchCursor // how far the store has been read
	banner      string      // alertLine, computed when the alerts change rather than at every frame
}

// watchMsg is the watch's state as read from the store, in a command.
type watchMsg struct {
	full        bool        // open is every open alert (else: the ones newer than the last read)
	same        bool        // nothing read: the state file was not written since the last full read
	at          watchCursor // where the next wait starts
	open        []state.Alert
	quarantined []state.QuarantineRecord
	errs        []string
	err         error
}

// watchCursor is how far the workbench has read the store.
type watchCursor struct {
	after   uint64           // the newest alert ID read
	gen     state.Generation // the state file's generation at the last full read
	written <-chan struct{}  // closed at the first write after that read; nil: poll the generation
}

// WatchPoll bounds how long the workbench goes without re-reading the alerts and quarantines
// (another process may have acknowledged, quarantined or released) where the state file cannot
// report writes. Where it can, each write wakes the workbench and state.NotifiedPoll is only a
// safety net.
var WatchPoll = time.Second

// initWatch installs the fleet's row marks, alert line and quarantine status.
func (m *Model) initWatch() {
	m.watch = watchState{bySandbox: map[string]int{}, quarantined: map[string]state.QuarantineRecord{}}
	m.fleet.Flag = func(id string) string {
		switch {
		case m.watch.bySandbox[id] > 0:
			return "!"
		case m.watch.quarantined[id].SandboxID != "":
			return "Q"
		}
		return ""
	}
	m.fleet.Banner = func() string { return m.watch.banner }
	running := m.fleet.Activity
	m.fleet.Activity = func(id string) string {
		if a := running(id); a != "" {
			return a
		}
		if m.watch.quarantined[id].SandboxID != "" {
			return "isolated" // quarantined; fits the status column
		}
		return ""
	}
}

// alertLine is the header's alert line: the newest open alert and how many are open.
func (m *Model) alertLine() string {
	n := len(m.watch.open)
	if n == 0 {
		if len(m.watch.errs) > 0 {
			return "watch: " + m.watch.errs[len(m.watch.errs)-1]
		}
		return ""
	}
	a := m.watch.open[n-1]
	s := fmt.Sprintf("ALERT %s %s: %s", strings.ToUpper(a.Severity.String()), backends.ShortName(a.SandboxID), a.Summary)
	if call := m.evals.agent[a.ID]; call != "" {
		s += " ← " + call
	}
	if n > 1 {
		s = fmt.Sprintf("%d open alerts; newest: %s", n, s)
	}
	return redact.Cell(s + "  (:alerts lists them)")
}

// watchCmds start following the watch, when there is one.
func (m *Model) watchCmds() []tea.Cmd {
	if m.opts.Watch == nil || m.opts.State == nil {
		return nil
	}
	return []tea.Cmd{waitWatch(m.ctx, m.opts.Watch, m.opts.State, watchCursor{}, true)}
}

// WatchCoalesce gathers the alerts of a burst into one read and one frame.
var WatchCoalesce = 100 * time.Millisecond

// waitWatch waits (in a command) for the watch's next change, a write to the state file or the
// poll, then reads what changed: after the watch's change, only the alerts newer than at.after
// (a burst costs one short read); after a write by any process, every open alert and the
// quarantines (acknowledgements and quarantines made by another process). An idle workbench
// whose state file reports writes does not wake at all; one that cannot report them stats the
// file every WatchPoll and reads only when it was written.
func waitWatch(ctx context.Context, w *watch.Watcher, db *state.DB, at watchCursor, first bool) tea.Cmd {
	return func() tea.Msg {
		full := first
		if !first {
			poll := WatchPoll
			if at.written != nil {
				poll = state.NotifiedPoll
			}
			select {
			case <-ctx.Done():
				return nil
			case <-w.Changed():
				time.Sleep(WatchCoalesce)
			case <-at.written:
				full = true
			case <-time.After(poll):
				// If nobody wrote the file, there is nothing to re-read.
				if at.gen.Unchanged(db.Generation(), time.Now()) {
					return watchMsg{same: true, at: at, errs: w.Errors()}
				}
				full = true
			}
		}
		q := state.AlertQuery{Open: true}
		if !full {
			q.After = at.after
		}
		if full { // both taken before the read: a write during it is read next time
			at.written, at.gen = db.Written(), db.Generation()
		}
		open, err := db.Alerts(q)
		msg := watchMsg{open: open, full: full, at: at, errs: w.Errors(), err: err}
		if full {
			qs, qerr := db.Quarantines()
			if err == nil {
				msg.err = qerr
			}
			msg.quarantined = qs
		}
		return msg
	}
}

func (m *Model) onWatch(msg watchMsg) tea.Cmd {
	if msg.same {
		m.watch.errs = msg.errs
		m.watch.banner = m.alertLine()
		return waitWatch(m.ctx, m.opts.Watch, m.opts.State, m.watch.read, false)
	}
	m.watch.read.written = msg.at.written // also after a failed read: the next write retries it
	if msg.err == nil {
		m.watch.read.gen = msg.at.gen
		if msg.full {
			m.watch.open = msg.open
			clear(m.watch.bySandbox)
			clear(m.watch.quarantined)
			for _, q := range msg.quarantined {
				m.watch.quarantined[q.SandboxID] = q
			}
		} else {
			m.watch.open = append(m.watch.open, msg.open...)
		}
		for _, a := range msg.open {
			m.watch.bySandbox[a.SandboxID]++
			m.watch.read.after = max(m.watch.read.after, a.ID)
		}
	}
	m.watch.errs = msg.errs
	if msg.err != nil {
		m.watch.errs = append(m.watch.errs, msg.err.Error())
	}
	m.watch.banner = m.alertLine()
	m.pokeEvals() // new exec alerts get the agent's command named at the next link refresh
	cmds := []tea.Cmd{waitWatch(m.ctx, m.opts.Watch, m.opts.State, m.watch.read, false)}
	for _, s := range m.stack {
		if a, ok := s.(*alerts.Model); ok {
			cmds = append(cmds, a.Load)
		}
	}
	return tea.Batch(cmds...)
}

// openAlerts pushes the alerts screen.
func openAlerts(m *Model, c *screen.Context, arg string) tea.Cmd {
	db, w := m.opts.State, m.opts.Watch
	evals, set := m.opts.Evals, &m.evals.set
	only := "" // `:alerts <sandbox>`: that sandbox's alerts only
	if strings.TrimSpace(arg) != "" {
		id, _, ok := m.triageTarget(c, "alerts", arg)
		if !ok {
			return nil
		}
		only = id
	}
	load := func() tea.Msg {
		if db == nil {
			return alerts.Loaded{Err: fmt.Errorf("no state file: alerts are unavailable")}
		}
		as, err := db.Alerts(state.AlertQuery{})
		if only != "" {
			as = slices.DeleteFunc(as, func(a state.Alert) bool { return a.SandboxID != only })
		}
		return alerts.Loaded{Alerts: as, Err: err, Agent: nameAlerts(evals, set.Load().links, as)}
	}
	who, authorize := m.identity(), watch.Authorizer(m.opts.Team.AuthorizeAck)
	ack := func(id uint64) tea.Cmd {
		return func() tea.Msg {
			var err error
			switch {
			case w != nil:
				_, err = w.Ack(id, who, authorize)
			case db != nil:
				_, err = watch.Ack(db, id, who, authorize, nil)
			default:
				err = fmt.Errorf("no state file")
			}
			return alertAckedMsg{id: id, err: err, reload: load()}
		}
	}
	c.Push(alerts.New(load, ack))
	return nil
}

type alertAckedMsg struct {
	id     uint64
	err    error
	reload tea.Msg
}

func (m *Model) onAcked(msg alertAckedMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus(fmt.Sprintf("ack %d: %s", msg.id, oneLine(msg.err.Error())))
	} else {
		m.setStatus(fmt.Sprintf("alert %d acknowledged by %s", msg.id, m.operator()))
	}
	return m.broadcast(msg.reload)
}

// operator is who this session acts as.
func (m *Model) operator() string { return m.identity().Operator }

// identity is who acts in this session: the team identity, else the layer's (standalone), else
// the local user.
func (m *Model) identity() action.Identity {
	if m.opts.Identity.Operator != "" {
		return m.opts.Identity
	}
	if m.opts.Actions != nil {
		if who := m.opts.Actions.Identity(); who.Operator != "" {
			return who
		}
	}
	return action.LocalIdentity()
}

// watchMarks are the containment watch's words for a sandbox in the detail title.
func (m *Model) watchMarks(id string) string {
	var parts []string
	if q := m.watch.quarantined[id]; q.SandboxID != "" {
		parts = append(parts, "QUARANTINED by "+q.Operator)
	}
	switch n := m.watch.bySandbox[id]; {
	case n == 1:
		parts = append(parts, "1 open alert")
	case n > 1:
		parts = append(parts, fmt.Sprintf("%d open alerts", n))
	}
	return strings.Join(parts, "  ")
}
