package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/views/alerts"
	"github.com/rangekeeper/rangekeeper/views/author"
	"github.com/rangekeeper/rangekeeper/views/cmdline"
	"github.com/rangekeeper/rangekeeper/views/detail"
	"github.com/rangekeeper/rangekeeper/views/dialog"
	"github.com/rangekeeper/rangekeeper/views/fleet"
	"github.com/rangekeeper/rangekeeper/views/help"
	"github.com/rangekeeper/rangekeeper/views/journal"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/list"
	"github.com/rangekeeper/rangekeeper/views/logs"
	"github.com/rangekeeper/rangekeeper/views/probereport"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/tasks"
	"github.com/rangekeeper/rangekeeper/views/timeline"
)

// entry registers one thing the operator can open: its `:` verbs (canonical first), the global
// binding that opens it, and what opening does. Adding a screen is its package plus one entry.
type entry struct {
	verbs cmdline.Verb
	key   keymap.Name   // "" when only the command line opens it
	proto screen.Screen // a zero screen of the kind run opens, for the key-conflict check
	run   func(m *Model, c *screen.Context, arg string) tea.Cmd
}

var registry = []entry{
	{verbs: cmdline.Verb{"sandboxes", "sb", "fleet"}, run: func(m *Model, _ *screen.Context, arg string) tea.Cmd {
		m.toRoot()
		return m.fleet.SetFilter(arg)
	}},
	{verbs: cmdline.Verb{"docker"}, run: backendFilter("docker")},
	{verbs: cmdline.Verb{"k8s", "kubernetes"}, run: backendFilter("k8s")},
	{verbs: cmdline.Verb{"pve", "proxmox"}, run: backendFilter("pve")},
	{verbs: cmdline.Verb{"filter"}, run: func(m *Model, _ *screen.Context, arg string) tea.Cmd {
		m.toRoot()
		return m.fleet.SetFilter(arg)
	}},
	{verbs: cmdline.Verb{"journal", "j"}, key: keymap.Journal, proto: (*journal.Model)(nil), run: openJournal},
	{verbs: cmdline.Verb{"snapshots", "snap"}, proto: (*list.Model)(nil), run: func(m *Model, c *screen.Context, _ string) tea.Cmd {
		c.Push(list.New("snapshots", list.Snapshots(m.opts.State, m.sandboxGone)))
		return nil
	}},
	{verbs: cmdline.Verb{"probes", "probe"}, proto: (*list.Model)(nil), run: func(m *Model, c *screen.Context, _ string) tea.Cmd {
		c.Push(list.New("probes (last verdict per sandbox)", list.Probes(m.opts.State, m.fleetSandboxes)))
		return nil
	}},
	{verbs: cmdline.Verb{"specs", "spec", "author"}, proto: (*list.Model)(nil), run: func(m *Model, c *screen.Context, _ string) tea.Cmd {
		c.Push(list.New("specs (from the fleet's compose labels, and drafts)", list.Specs(m.opts.State, m.fleetSandboxes, m.keyProse(keymap.Author, "%s opens the author"))))
		return nil
	}},
	{verbs: cmdline.Verb{"tasks"}, key: keymap.Tasks, proto: (*tasks.Model)(nil), run: func(m *Model, c *screen.Context, _ string) tea.Cmd {
		src := tasks.Source(nil)
		if m.opts.Actions != nil {
			src = m.opts.Actions.Tasks
		}
		c.Push(tasks.New(src))
		return nil
	}},
	{verbs: cmdline.Verb{"help"}, key: keymap.Help, proto: (*help.Model)(nil), run: func(m *Model, c *screen.Context, _ string) tea.Cmd {
		c.Push(help.New(m.live(), m.selection(), m.BackgroundSource))
		return nil
	}},
	{key: keymap.Author, proto: author.NewScreen(author.Options{}), run: func(m *Model, c *screen.Context, _ string) tea.Cmd {
		if _, open := m.top().(*author.Screen); open {
			return nil
		}
		opts := author.Options{Width: m.width, Height: m.height, NoColor: m.opts.NoColor}
		if m.opts.State != nil {
			opts.Drafts = m.opts.State
		}
		opts.Verify = m.authorVerify()
		c.Push(author.NewScreen(opts))
		return nil
	}},
	{verbs: cmdline.Verb{"sort"}, run: func(m *Model, _ *screen.Context, arg string) tea.Cmd { return m.sortBy(arg) }},
	{verbs: cmdline.Verb{"group"}, run: func(m *Model, _ *screen.Context, arg string) tea.Cmd { return m.groupBy(arg) }},
	{verbs: cmdline.Verb{"q", "quit"}, run: func(m *Model, _ *screen.Context, _ string) tea.Cmd {
		m.cancel()
		return tea.Quit
	}},

	// Triage (tui/triage.go).
	{verbs: cmdline.Verb{"logs", "log"}, key: keymap.Logs, proto: (*logs.Model)(nil), run: openLogs},
	{verbs: cmdline.Verb{"timeline", "tl"}, key: keymap.Timeline, proto: (*timeline.Model)(nil), run: openTimeline},
	{verbs: cmdline.Verb{"shell", "sh"}, run: openShellVerb},
	// Containment watch (watch.go).
	{verbs: cmdline.Verb{"alerts", "alert"}, proto: (*alerts.Model)(nil), run: openAlerts},
	// Inspect's live evals (evals.go): the sandboxes whose eval process is gone.
	{verbs: cmdline.Verb{"orphans"}, run: openOrphans},
}

// registryKeys are the global bindings that open registered screens.
var registryKeys []keymap.Name

func init() {
	for _, e := range registry {
		if e.key != "" {
			registryKeys = append(registryKeys, e.key)
		}
	}
}

// builtins are the screens opened other than through the registry; with the registry's they
// are every kind of screen, for the key-conflict check.
var builtins = []screen.Screen{(*fleet.Screen)(nil), (*detail.Model)(nil), (*dialog.Model)(nil), (*cmdline.Model)(nil), (*probereport.Model)(nil)}

// verbs are the command line's words, from the registry.
func verbs() []cmdline.Verb {
	var out []cmdline.Verb
	for _, e := range registry {
		if len(e.verbs) > 0 {
			out = append(out, e.verbs)
		}
	}
	return out
}

// Keys is the default keymap with the config's overrides (name → "k1,k2"). A remap that binds a
// key twice on any screen, names no binding, or uses the terminal's flow control is an error.
func Keys(over map[string]string) (*keymap.Map, error) {
	km := keymap.Default()
	if len(over) == 0 {
		return km, nil
	}
	return km.Remap(over, Scopes()...)
}

// Scopes are the sets of bindings live at once: each kind of screen's own with the global ones.
func Scopes() [][]keymap.Name {
	common := append(append([]keymap.Name(nil), globalNames...), registryKeys...)
	var out [][]keymap.Name
	seen := map[string]bool{}
	add := func(s screen.Screen) {
		if s == nil {
			return
		}
		k := fmt.Sprintf("%T", s)
		if seen[k] {
			return
		}
		seen[k] = true
		scope := append(append([]keymap.Name(nil), common...), s.Bindings()...)
		if _, modal := s.(screen.Modal); modal {
			scope = s.Bindings() // a modal takes every key: nothing else is live
		}
		out = append(out, scope)
	}
	for _, s := range builtins {
		add(s)
	}
	for _, e := range registry {
		add(e.proto)
	}
	return out
}

func backendFilter(kind string) func(m *Model, _ *screen.Context, arg string) tea.Cmd {
	return func(m *Model, _ *screen.Context, arg string) tea.Cmd {
		m.toRoot()
		f := "backend=" + kind
		if arg != "" {
			f += " " + arg
		}
		return m.fleet.SetFilter(f)
	}
}

// openJournal opens the journal narrowed to arg (resolved like every sandbox argument), or to
// the sandbox the screen on top is about.
func openJournal(m *Model, c *screen.Context, arg string) tea.Cmd {
	target := m.subject()
	if arg != "" {
		sb, err := action.ResolveSandbox(m.fleetSandboxes(), arg)
		if err != nil {
			c.SetStatus("journal: " + err.Error())
			return nil
		}
		target = sb.ID
	}
	var src journal.Source
	if m.opts.State != nil {
		src = m.opts.State
	}
	j := journal.New(src, target)
	j.Running = m.actionRunning // orphans.go
	c.Push(j)
	return nil
}

// runCommandLine executes one `:` command.
func (m *Model) runCommandLine(c *screen.Context, line string) tea.Cmd {
	cmd, err := cmdline.Parse(line, verbs())
	if err != nil {
		c.SetStatus(err.Error())
		return nil
	}
	for _, e := range registry {
		if len(e.verbs) > 0 && e.verbs[0] == cmd.Verb {
			return e.run(m, c, cmd.Arg)
		}
	}
	return nil
}

func (m *Model) sortBy(arg string) tea.Cmd {
	o := m.fleet.Store().Order()
	f := strings.Fields(strings.ToLower(arg))
	if len(f) == 0 {
		m.setStatus("sort: which column? backend sandbox task eval sample status members age sev")
		return nil
	}
	name := strings.TrimPrefix(f[0], "-")
	o.Desc = strings.HasPrefix(f[0], "-") || (len(f) > 1 && f[1] == "desc")
	for c := fleet.ColBackend; c <= fleet.ColSev; c++ {
		cn := strings.ToLower(c.String())
		if cn == name || (name == "name" && c == fleet.ColName) {
			o.Col = c
			m.toRoot()
			return m.fleet.SetOrder(o)
		}
	}
	m.setStatus(fmt.Sprintf("sort: unknown column %q (backend sandbox task eval sample status members age sev)", name))
	return nil
}

func (m *Model) groupBy(arg string) tea.Cmd {
	o := m.fleet.Store().Order()
	name := strings.ToLower(strings.TrimSpace(arg))
	for _, g := range []fleet.Grouping{fleet.GroupNone, fleet.GroupBackend, fleet.GroupTask, fleet.GroupStatus} {
		if g.String() == name || (name == "" && g == fleet.GroupNone) {
			o.Group = g
			m.toRoot()
			return m.fleet.SetOrder(o)
		}
	}
	m.setStatus(fmt.Sprintf("group: unknown grouping %q (none backend task status)", name))
	return nil
}

func (m *Model) fleetSandboxes() []backends.Sandbox {
	if m.opts.Supervisor == nil {
		return nil
	}
	return m.opts.Supervisor.Fleet()
}

// openDetail opens a row's detail with everything it reads from.
func (m *Model) openDetail(c *screen.Context, r *fleet.Row) tea.Cmd {
	src := detail.Sources{StatsEvery: m.opts.StatsEvery,
		Lookup: func(id string) (backends.Sandbox, string, bool) {
			row, ok := m.fleet.Store().Get(id)
			if !ok {
				return backends.Sandbox{}, "", false
			}
			stale := ""
			if row.Stale {
				stale = m.fleet.StaleReason(row.Backend)
			}
			return row.Sandbox(), stale, true
		},
		Busy: func(id string) string { return m.running[id].action },
		Gone: func(id string) bool { return m.sandboxGone(r.Backend, id) }, // orphans.go
	}
	if m.opts.State != nil {
		src.DB = m.opts.State
	}
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
	if sup := m.opts.Supervisor; sup != nil {
		src.Stats = func(id string) (func(context.Context) ([]backends.MemberStats, error), string) {
			b, _, ok := sup.Lookup(id)
			if !ok {
				return nil, "" // gone: nothing to sample
			}
			sr, ok := b.(backends.StatsReader)
			if !ok {
				return nil, fmt.Sprintf("not reported by %s", b.Kind())
			}
			return func(ctx context.Context) ([]backends.MemberStats, error) { return sr.Stats(ctx, id) }, ""
		}
	}
	src.Marks = m.watchMarks // the containment watch (watch.go)
	d := detail.New(r.Sandbox(), src)
	if r.Stale {
		d.Stale = m.fleet.StaleReason(r.Backend)
	}
	c.Push(d)
	return nil
}
