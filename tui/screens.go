package tui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/theme"
	"github.com/rangekeeper/rangekeeper/views/author"
	"github.com/rangekeeper/rangekeeper/views/cmdline"
	"github.com/rangekeeper/rangekeeper/views/detail"
	"github.com/rangekeeper/rangekeeper/views/fleet"
	"github.com/rangekeeper/rangekeeper/views/journal"
	"github.com/rangekeeper/rangekeeper/views/tasks"
)

type detailDataMsg struct{ data detail.Data }

type statsMsg struct {
	gen   int
	id    string
	stats []backends.MemberStats
	err   error
}

type statsTickMsg struct{ gen int }

type journalMsg struct {
	target  string
	entries []state.Entry
	err     error
}

type listMsg struct {
	title string
	lines []string
	err   error
}

func (m *Model) openDetail() tea.Cmd {
	r := m.fleet.Selected()
	if r == nil {
		m.setStatus("nothing selected")
		return nil
	}
	m.detail = detail.New(r.SB)
	m.detail.Footer = m.hints("snapshot", "revert", "teardown", "probe", "journal", "back")
	if r.Stale {
		m.detail.Stale = m.fleet.StaleReason(r.Backend)
	}
	m.screen = screenDetail
	m.statsGen++
	return tea.Batch(m.loadDetail(r.SB), m.sampleStats(m.statsGen, r.SB.ID))
}

func (m *Model) loadDetail(sb backends.Sandbox) tea.Cmd {
	src := detail.Sources{DB: m.opts.State}
	if layer, ctx := m.opts.Actions, m.ctx; layer != nil {
		src.Snapshots = func(id string) ([]backends.SnapshotInfo, error) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			snaps, err := layer.Snapshots(ctx, id)
			if errors.Is(err, action.ErrUnsupported) { // the reason alone reads better here
				err = errors.New(strings.TrimSuffix(err.Error(), ": "+action.ErrUnsupported.Error()))
			}
			return snaps, err
		}
	}
	return func() tea.Msg { return detailDataMsg{data: detail.Load(src, sb)} }
}

// sampleStats reads resource use once when the sandbox's backend can; the result schedules the
// next sample while the same detail screen (generation) is open.
func (m *Model) sampleStats(gen int, id string) tea.Cmd {
	if m.opts.Supervisor == nil || m.opts.StatsEvery < 0 {
		return nil
	}
	b, _, ok := m.opts.Supervisor.Lookup(id)
	if !ok {
		return nil
	}
	sr, ok := b.(backends.StatsReader)
	if !ok {
		m.detail.StatsErr = fmt.Sprintf("not reported by %s", b.Kind())
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		ss, err := sr.Stats(ctx, id)
		return statsMsg{gen: gen, id: id, stats: ss, err: err}
	}
}

func (m *Model) openJournal(target string) tea.Cmd {
	if m.screen != screenJournal {
		m.prev = m.screen
	}
	m.screen = screenJournal
	m.journal = journal.Model{Target: target}
	return m.loadJournal(target)
}

func (m *Model) loadJournal(target string) tea.Cmd {
	db := m.opts.State
	if db == nil {
		m.journal.Err = "no state file: the journal is unavailable"
		return nil
	}
	return func() tea.Msg {
		es, err := journal.Load(db, target)
		return journalMsg{target: target, entries: es, err: err}
	}
}

// reloadOpen refreshes whatever screen shows records an action may have changed.
func (m *Model) reloadOpen() tea.Cmd {
	switch m.screen {
	case screenJournal:
		return m.loadJournal(m.journal.Target)
	case screenDetail:
		return m.loadDetail(m.detail.SB)
	}
	return nil
}

func (m *Model) handleScreenResult(msg tea.Msg) (tea.Model, tea.Cmd, bool) {
	switch msg := msg.(type) {
	case detailDataMsg:
		if m.detail.SB.ID == msg.data.SandboxID {
			m.detail.SetData(msg.data)
		}
		return m, nil, true
	case statsMsg:
		if msg.gen != m.statsGen || m.screen != screenDetail {
			return m, nil, true // the screen closed: the loop ends here
		}
		m.detail.StatsErr = ""
		if msg.err != nil {
			m.detail.StatsErr = oneLine(msg.err.Error())
		}
		m.detail.AddStats(msg.stats)
		gen := msg.gen
		return m, tea.Tick(m.opts.StatsEvery, func(time.Time) tea.Msg { return statsTickMsg{gen: gen} }), true
	case statsTickMsg:
		if msg.gen != m.statsGen || m.screen != screenDetail {
			return m, nil, true
		}
		return m, m.sampleStats(msg.gen, m.detail.SB.ID), true
	case journalMsg:
		if msg.target == m.journal.Target {
			m.journal.SetEntries(msg.entries)
			m.journal.Err = ""
			if msg.err != nil {
				m.journal.Err = msg.err.Error()
			}
		}
		return m, nil, true
	case listMsg:
		m.list = listScreen{title: msg.title, lines: msg.lines}
		if msg.err != nil {
			m.list.lines = append([]string{"error: " + msg.err.Error()}, m.list.lines...)
		}
		return m, nil, true
	case author.ClosedMsg:
		m.author = nil
		m.screen = screenFleet
		return m, nil, true
	}
	return m, nil, false
}

func (m *Model) openAuthor() tea.Cmd {
	opts := author.Options{Embedded: true, Width: m.width, Height: m.height, NoColor: m.opts.NoColor}
	if m.opts.State != nil {
		opts.Drafts = m.opts.State
	}
	m.author = author.New(opts)
	m.screen = screenAuthor
	return m.author.Init()
}

func (m *Model) updateAuthor(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(author.ClosedMsg); ok {
		m.author, m.screen = nil, screenFleet
		return m, nil
	}
	var cmd tea.Cmd
	m.author, cmd = m.author.Update(msg)
	return m, cmd
}

// runCommandLine executes one `:` command.
func (m *Model) runCommandLine(line string) (tea.Model, tea.Cmd) {
	c, err := cmdline.Parse(line)
	if err != nil {
		m.setStatus(err.Error())
		return m, nil
	}
	switch c.Verb {
	case "q":
		m.cancel()
		return m, tea.Quit
	case "sandboxes":
		m.screen = screenFleet
		return m, m.fleet.SetFilter(c.Arg)
	case "docker", "k8s", "pve":
		m.screen = screenFleet
		f := "backend=" + c.Verb
		if c.Arg != "" {
			f += " " + c.Arg
		}
		return m, m.fleet.SetFilter(f)
	case "filter":
		m.screen = screenFleet
		return m, m.fleet.SetFilter(c.Arg)
	case "journal":
		return m, m.openJournal(c.Arg)
	case "tasks":
		m.openTasks()
		return m, nil
	case "help":
		m.screen = screenHelp
		return m, nil
	case "snapshots":
		return m, m.openList("snapshots", m.snapshotLines)
	case "probes":
		return m, m.openList("probes (last verdict per sandbox)", m.probeLines)
	case "specs":
		return m, m.openList("specs (from the fleet's compose labels, and drafts)", m.specLines)
	case "sort":
		return m, m.sortBy(c.Arg)
	case "group":
		return m, m.groupBy(c.Arg)
	}
	return m, nil
}

func (m *Model) sortBy(arg string) tea.Cmd {
	o := m.fleet.Store().Order()
	f := strings.Fields(strings.ToLower(arg))
	if len(f) == 0 {
		m.setStatus("sort: which column? backend sandbox task status members age sev")
		return nil
	}
	name := strings.TrimPrefix(f[0], "-")
	o.Desc = strings.HasPrefix(f[0], "-") || (len(f) > 1 && f[1] == "desc")
	for c := fleet.ColBackend; c <= fleet.ColSev; c++ {
		cn := strings.ToLower(c.String())
		if cn == name || (name == "name" && c == fleet.ColName) {
			o.Col = c
			m.screen = screenFleet
			return m.fleet.SetOrder(o)
		}
	}
	m.setStatus(fmt.Sprintf("sort: unknown column %q (backend sandbox task status members age sev)", name))
	return nil
}

func (m *Model) groupBy(arg string) tea.Cmd {
	o := m.fleet.Store().Order()
	name := strings.ToLower(strings.TrimSpace(arg))
	for _, g := range []fleet.Grouping{fleet.GroupNone, fleet.GroupBackend, fleet.GroupTask, fleet.GroupStatus} {
		if g.String() == name || (name == "" && g == fleet.GroupNone) {
			o.Group = g
			m.screen = screenFleet
			return m.fleet.SetOrder(o)
		}
	}
	m.setStatus(fmt.Sprintf("group: unknown grouping %q (none backend task status)", name))
	return nil
}

// openList shows a read-only list computed by a command.
func (m *Model) openList(title string, load func() ([]string, error)) tea.Cmd {
	if m.screen != screenList {
		m.prev = m.screen
	}
	m.screen = screenList
	m.list = listScreen{title: title, lines: []string{"loading..."}}
	return func() tea.Msg {
		lines, err := load()
		return listMsg{title: title, lines: lines, err: err}
	}
}

func (m *Model) fleetSandboxes() []backends.Sandbox {
	if m.opts.Supervisor == nil {
		return nil
	}
	return m.opts.Supervisor.Fleet()
}

func (m *Model) snapshotLines() ([]string, error) {
	if m.opts.State == nil {
		return nil, fmt.Errorf("no state file")
	}
	recs, err := m.opts.State.Snapshots("")
	var out []string
	for i := len(recs) - 1; i >= 0; i-- {
		in := recs[i].Info
		out = append(out, fmt.Sprintf("%s  %-20s %-24s %s", in.Created.UTC().Format("2006-01-02 15:04:05"), ansi.Truncate(in.Name, 20, "~"), in.ID, in.SandboxID))
	}
	if len(out) == 0 {
		out = append(out, "no snapshots recorded")
	}
	return out, err
}

func (m *Model) probeLines() ([]string, error) {
	if m.opts.State == nil {
		return nil, fmt.Errorf("no state file")
	}
	var out []string
	for _, sb := range m.fleetSandboxes() {
		ps, err := m.opts.State.Probes(sb.ID, 1)
		if err != nil {
			return out, err
		}
		if len(ps) == 1 {
			out = append(out, fmt.Sprintf("%s  %-8s %-30s %s", ps[0].Time.UTC().Format("2006-01-02 15:04:05"), ps[0].Worst, sb.Name, ps[0].Summary))
		} else {
			out = append(out, fmt.Sprintf("%-19s  %-8s %-30s", "never probed", "-", sb.Name))
		}
	}
	if len(out) == 0 {
		out = append(out, "no sandboxes")
	}
	return out, nil
}

func (m *Model) specLines() ([]string, error) {
	var out []string
	for _, sb := range m.fleetSandboxes() {
		if p := detail.SpecPath(sb); p != "" {
			out = append(out, fmt.Sprintf("%-30s %s", sb.Name, p))
		}
	}
	if m.opts.State != nil {
		ds, err := m.opts.State.Drafts()
		if err != nil {
			return out, err
		}
		for _, d := range ds {
			out = append(out, fmt.Sprintf("draft %-24s %s %s", d.Name, d.Format, d.Target))
		}
	}
	if len(out) == 0 {
		out = append(out, "no specs known (a opens the author)")
	}
	sort.Strings(out)
	return out, nil
}

// listScreen is a scrollable read-only list (:snapshots, :probes, :specs).
type listScreen struct {
	title  string
	lines  []string
	offset int
}

func (l *listScreen) update(msg tea.KeyPressMsg, page int) {
	switch msg.String() {
	case "j", "down":
		l.offset++
	case "k", "up":
		l.offset--
	case "pgdown":
		l.offset += page
	case "pgup":
		l.offset -= page
	}
	l.offset = max(0, min(l.offset, len(l.lines)-1))
}

func (l *listScreen) view(th theme.Theme, w, h int) string {
	out := []string{th.Title.Render(ansi.Truncate(l.title, w, "~"))}
	for i := l.offset; i < len(l.lines) && len(out) < h-1; i++ {
		out = append(out, ansi.Truncate(l.lines[i], w, "~"))
	}
	for len(out) < h-1 {
		out = append(out, "")
	}
	out = append(out, th.Dim.Render(ansi.Truncate("j/k scroll  esc back", w, "~")))
	return strings.Join(out, "\n")
}

func tasksView(th theme.Theme, ts []action.Task, w, h int, now time.Time) string {
	return tasks.View(th, ts, w, h, now)
}

// hints renders "key help" pairs for the named bindings that exist in the keymap (remapped keys
// and read-only mode included).
func (m *Model) hints(names ...string) string {
	var parts []string
	for _, n := range names {
		if b, ok := m.keys.Get(n); ok {
			parts = append(parts, b.Label()+" "+b.Help)
		}
	}
	return strings.Join(parts, "  ")
}
