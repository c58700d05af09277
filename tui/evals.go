package tui

import (
	"context"
	"path"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/detail"
	"github.com/rangekeeper/rangekeeper/views/fleet"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/timeline"
)

// evalsState is what the workbench shows of Inspect's live evals: every row's link (the EVAL
// and SAMPLE columns), the agent's tool call behind each exec alert, and the links for the
// commands that need them (the alerts screen's loads).
type evalsState struct {
	// set is the last refresh, for commands: replaced whole, never modified.
	set atomic.Pointer[linkSet]
	// agent names the agent's tool call behind an exec alert (by alert ID), for the alert line.
	agent map[uint64]string
	// poke wakes the refresher when the fleet changed (a new sandbox needs its link) though
	// the evals did not. Update sends without blocking; the buffer of one coalesces.
	poke chan struct{}
	// refreshes counts installed refreshes (tests).
	refreshes int
}

// linkSet is one refresh's links of linked sandboxes (by sandbox ID) and the poller's versions.
type linkSet struct {
	links       map[string]inspectlive.Link
	version     uint64
	linkVersion uint64
	at          time.Time // when the refresh was asked for
}

// EvalsCoalesce gathers a burst of poller changes and fleet updates into one refresh.
var EvalsCoalesce = 150 * time.Millisecond

// EvalsRelinkEvery bounds how long links stand while only the samples' progress moves (the
// poller's LinkVersion did not): the agent's commands, which can confirm a Docker link as
// matched, are read then. Relinking every row at every event cost a running eval's workbench
// about 1 % of a core (BenchmarkLiveEvals200Samples); the open sample panel rereads at once.
var EvalsRelinkEvery = 10 * time.Second

// evalsWakeMsg: the poller published a change, or the fleet changed (poked): time to relink,
// unless only progress moved.
type evalsWakeMsg struct{ poked bool }

// linksMsg is a refresh computed off the UI goroutine.
type linksMsg struct {
	version     uint64
	linkVersion uint64
	at          time.Time
	update      fleet.LinkUpdate
	links       map[string]inspectlive.Link
	agent       map[uint64]string
}

func (m *Model) initEvals() {
	m.evals.poke = make(chan struct{}, 1)
	m.evals.set.Store(&linkSet{})
}

// evalsCmds start following the poller, when there is one: the first refresh at once.
func (m *Model) evalsCmds() []tea.Cmd {
	if m.opts.Evals == nil {
		return nil
	}
	return []tea.Cmd{func() tea.Msg { return evalsWakeMsg{poked: true} }}
}

// waitEvals waits (in a command) for the poller's next change after version, or for the fleet
// to change. One refresh is in flight at a time: the next wait starts when it is installed.
func waitEvals(ctx context.Context, w *inspectlive.Watcher, poke <-chan struct{}, version uint64) tea.Cmd {
	return func() tea.Msg {
		ch := w.Changed() // before the version check: a change between them still wakes us
		poked := false
		if w.Version() == version {
			select {
			case <-ctx.Done():
				return nil
			case <-ch:
			case <-poke:
				poked = true
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(EvalsCoalesce):
		}
		select { // a poke during the coalescing wait is this refresh's too
		case <-poke:
			poked = true
		default:
		}
		return evalsWakeMsg{poked: poked}
	}
}

// onEvalsWake hands the rows (immutable, a slice of pointers), the exec alerts and where the
// sandboxes' recent exec lines are to a command that links them.
func (m *Model) onEvalsWake(msg evalsWakeMsg) tea.Cmd {
	w := m.opts.Evals
	if w == nil {
		return nil
	}
	now, last := m.opts.Now(), m.evals.set.Load()
	if !msg.poked && w.LinkVersion() == last.linkVersion && now.Sub(last.at) < EvalsRelinkEvery {
		// Only progress moved: the links stand; the open sample panel rereads.
		return tea.Batch(waitEvals(m.ctx, w, m.evals.poke, w.Version()), m.broadcast(detail.SampleChanged{}))
	}
	rows := m.fleet.Rows()
	alerts := execAlerts(m.watch.open)
	x := m.execLines()
	return func() tea.Msg {
		v, lv := w.Version(), w.LinkVersion()
		links := make(map[string]inspectlive.Link)
		shown := make(map[string]*fleet.EvalLink)
		for _, r := range rows {
			l := w.Link(r.SB, recentExecs(x, r.SB)...)
			if el := evalLink(l); el != nil {
				shown[r.SB.ID] = el
			}
			if l.Linked() {
				links[r.SB.ID] = l
			}
		}
		return linksMsg{version: v, linkVersion: lv, at: now, update: fleet.PrepareLinks(rows, shown), links: links, agent: nameAlerts(w, links, alerts)}
	}
}

// execLines is where a sandbox's recent exec command lines come from: the supervisor asks the
// backend owning it. nil without a supervisor.
func (m *Model) execLines() backends.ExecLines {
	if m.opts.Supervisor == nil {
		return nil
	}
	return m.opts.Supervisor
}

// recentExecs are the command lines a Docker sandbox recently executed, which let the linker
// confirm a trace or guessed link (How=matched). They may hold secrets: they are read in a
// command, handed to Link and dropped, never kept in a message, the model or the screen.
// Link uses them for Docker only, so other rows skip the backend's lock.
func recentExecs(x backends.ExecLines, sb backends.Sandbox) []string {
	if x == nil || sb.Backend != backends.KindDocker {
		return nil
	}
	return x.RecentExecs(sb.ID)
}

func (m *Model) onLinks(msg linksMsg) tea.Cmd {
	m.evals.refreshes++
	m.evals.set.Store(&linkSet{links: msg.links, version: msg.version, linkVersion: msg.linkVersion, at: msg.at})
	m.evals.agent = msg.agent
	m.watch.banner = m.alertLine()
	return tea.Batch(m.fleet.ApplyLinks(msg.update), waitEvals(m.ctx, m.opts.Evals, m.evals.poke, msg.version),
		m.broadcast(detail.SampleChanged{}))
}

// pokeEvals asks for a refresh after the fleet changed (never blocks).
func (m *Model) pokeEvals() {
	if m.opts.Evals == nil {
		return
	}
	select {
	case m.evals.poke <- struct{}{}:
	default:
	}
}

// evalLink is what the table shows of a link; nil for a sandbox the linker knows nothing of.
func evalLink(l inspectlive.Link) *fleet.EvalLink {
	if l.How == inspectlive.HowUnknown || l.How == "" {
		return nil
	}
	return &fleet.EvalLink{Task: shortTask(l.Eval.Task), SampleID: l.SampleID, Epoch: l.Epoch, How: string(l.How),
		Why: l.Why, Orphaned: l.Orphaned}
}

// shortTask drops a registry path ("inspect_evals/cybench" → "cybench").
func shortTask(t string) string { return path.Base(t) }

// execAlerts copies the open exec alerts (the slice is the Update goroutine's).
func execAlerts(open []state.Alert) []state.Alert {
	var out []state.Alert
	for _, a := range open {
		if a.Kind == state.AlertExec {
			out = append(out, a)
		}
	}
	return out
}

// linkScreen gives a screen being opened the poller's readers: the detail's sample panel, and
// the timeline's agent commands and alerts.
func (m *Model) linkScreen(s screen.Screen) {
	w, db, set, x := m.opts.Evals, m.opts.State, &m.evals.set, m.execLines()
	switch s := s.(type) {
	case *detail.Model:
		if w != nil {
			s.SetSampleSources(func(sb backends.Sandbox) detail.SampleData { return sampleOf(w, sb, recentExecs(x, sb)...) },
				func(l inspectlive.Link, seq int64) (string, bool) {
					return w.Output(l.Eval.Key, l.SampleID, l.Epoch, seq)
				})
		}
	case *timeline.Model:
		s.SetMerge(func(id string) ([]state.TimelineEntry, error) {
			links := set.Load().links
			out := agentEntries(w, links[id])
			if db == nil {
				return out, nil
			}
			as, err := db.Alerts(state.AlertQuery{SandboxID: id})
			return append(out, alertEntries(as, nameAlerts(w, links, as))...), err
		})
	}
}

// sampleOf is a sandbox's link (confirmed by execs, the commands it recently ran, as the table's
// is) and its sample's state (memory; called in commands).
func sampleOf(w *inspectlive.Watcher, sb backends.Sandbox, execs ...string) detail.SampleData {
	d := detail.SampleData{Link: w.Link(sb, execs...)}
	l := d.Link
	if l.Linked() {
		d.State, d.Known = w.Sample(l.Eval.Key, l.SampleID, l.Epoch)
	}
	if p := d.State.Pending; p != nil && strings.HasPrefix(p.Cmd, "attachment://") {
		// A long tool call is condensed in the buffer: read it whole here (this is a command).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if cmd, err := w.Resolve(ctx, l.Eval.Key, l.SampleID, l.Epoch, p.Cmd); err == nil {
			whole := *p // the snapshot's own: shared with every reader, never modified
			whole.Cmd = cmd
			d.State.Pending = &whole
		}
	}
	return d
}

// openOrphans is `:orphans [filter]`: the fleet narrowed to sandboxes whose Inspect eval process
// is gone (`rangekeeper teardown --orphans` removes them; here they are marked, never acted on
// in bulk).
func openOrphans(m *Model, c *screen.Context, arg string) tea.Cmd {
	if m.opts.Evals == nil {
		c.SetStatus("orphans: no Inspect poller (the inspect section of the config)")
		return nil
	}
	m.toRoot()
	f := "link=orphaned"
	if arg != "" {
		f += " " + arg
	}
	return m.fleet.SetFilter(f)
}
