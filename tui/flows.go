package tui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/views/dialog"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/probereport"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// flow is what a sandbox binding does once its guard lets it act: ask the operator when the
// action needs it, then run through the action layer. A kind whose UI is its own (a name to
// type, a snapshot to pick, a report to show) has an entry in flows; every other kind with a
// key takes the generic flow (plainFlow), so a new kind needs no entry here.
type flow func(m *Model, c *screen.Context, ids []string) tea.Cmd

var flows = map[keymap.Name]flow{
	keymap.Snapshot: (*Model).snapshotFlow,
	keymap.Revert:   (*Model).revertFlow,
	keymap.Teardown: (*Model).teardownFlow,
	keymap.Probe:    (*Model).probeFlow,
	keymap.Copy:     (*Model).copyFlow,
	keymap.Cancel:   (*Model).cancelFlow,
	keymap.Shell:    (*Model).shellFlow, // triage.go
}

// The kinds with a key and no flow of their own take the generic one.
func init() {
	for _, k := range backends.Kinds() {
		if n := keymap.ActionName(k.Kind); k.Key != "" && flows[n] == nil && action.Plain(k.Kind) {
			flows[n] = plainFlow(k.Kind)
		}
	}
}

// plainFlow asks for confirmation when the kind needs it, showing its declared warning, then
// takes it through the action layer (action.Layer.Act).
func plainFlow(a backends.Action) flow {
	return func(m *Model, c *screen.Context, ids []string) tea.Cmd {
		run := func() tea.Cmd {
			return m.start(a, ids, func(ctx context.Context, req action.Request) (string, error) {
				return m.opts.Actions.Act(ctx, req)
			})
		}
		if !a.NeedsConfirm() {
			return run()
		}
		spec, _ := a.Spec()
		title := fmt.Sprintf("%s %s?", a, m.name(ids[0]))
		if len(ids) > 1 {
			title = fmt.Sprintf("%s %d sandboxes?", a, len(ids))
		}
		c.Push(&dialog.Model{Kind: dialog.Confirm, Danger: true, Title: title, Body: spec.Warning,
			OnCancel: cancelled(string(a)),
			OnAccept: func(*screen.Context, *dialog.Model) tea.Cmd { return run() }})
		return nil
	}
}

// guard installs every binding's disabled reason. They read only in-memory state (the fleet,
// the action layer's locks), never a backend, because they run at every frame.
func (m *Model) guard() {
	for _, b := range m.keys.All() {
		switch {
		case b.Action != "":
			a, bulk := b.Action, b.Bulk
			m.keys.Guard(b.Name, func(sel keymap.Selection) string {
				ids := sel.Targets(bulk)
				if len(ids) == 0 {
					return string(a) + ": no sandbox selected"
				}
				for _, id := range ids { // bulk: every target must be allowed; the first refusal is shown
					if why := m.actionReason(a, id); why != "" {
						return why
					}
				}
				return ""
			})
		case b.Name == keymap.Copy:
			m.keys.Guard(b.Name, func(sel keymap.Selection) string {
				if sel.Sandbox == "" {
					return "copy: no sandbox selected"
				}
				return ""
			})
		case b.Name == keymap.Cancel:
			m.keys.Guard(b.Name, func(sel keymap.Selection) string {
				if sel.Sandbox == "" {
					return "cancel: no sandbox selected"
				}
				if _, ok := m.running[sel.Sandbox]; ok {
					return ""
				}
				if m.opts.Actions != nil {
					if _, busy := m.opts.Actions.Busy(sel.Sandbox); busy {
						return ""
					}
				}
				return "cancel: no action running on " + backends.ShortName(sel.Sandbox)
			})
		}
	}
}

// actionReason explains why action a cannot run on sandbox id ("" when it can).
func (m *Model) actionReason(a backends.Action, id string) string {
	if m.opts.Actions == nil {
		return string(a) + ": actions are unavailable (no action layer)"
	}
	if r, ok := m.fleet.Store().Get(id); ok && r.Stale {
		why := m.fleet.StaleReason(r.Backend)
		if why == "" {
			why = "cached row"
		}
		return fmt.Sprintf("%s: %s is unreachable (%s)", a, r.Backend, why)
	}
	if m.opts.Supervisor != nil {
		if b, _, ok := m.opts.Supervisor.Lookup(id); ok {
			if ok, why := backends.Supports(b, a); !ok {
				if a == backends.ActionSnapshot || a == backends.ActionRevert {
					if ok, _ := backends.Supports(b, backends.ActionReset); ok && !strings.Contains(why, "reset available") {
						why += " — reset available"
					}
				}
				return why
			}
		}
	}
	if err := m.opts.Actions.Check(m.request(a, id)); err != nil {
		return strings.TrimSuffix(err.Error(), ": "+action.ErrUnsupported.Error()) // the reason reads better alone
	}
	return ""
}

// request is an action request from this session.
func (m *Model) request(a backends.Action, id string) action.Request {
	return action.Request{Action: a, SandboxID: id, Confirmed: true, Identity: m.opts.Identity}
}

// runBinding runs a sandbox binding on sel, or says why it cannot.
func (m *Model) runBinding(n keymap.Name, sel keymap.Selection) tea.Cmd {
	b, ok := m.keys.Get(n)
	if !ok {
		return nil
	}
	if why := b.Disabled(sel); why != "" {
		m.setStatus(why)
		return nil
	}
	ids := sel.Targets(b.Bulk)
	if len(ids) == 0 {
		m.setStatus(string(n) + ": no sandbox selected")
		return nil
	}
	c := m.context()
	return tea.Batch(flows[n](m, c, ids), m.apply(c))
}

func (m *Model) snapshotFlow(c *screen.Context, ids []string) tea.Cmd {
	c.Push(&dialog.Model{Kind: dialog.Prompt, Title: "snapshot " + m.name(ids[0]), Body: []string{"name (optional; enter for a generated one)"},
		OnCancel: cancelled("snapshot"),
		OnAccept: func(c *screen.Context, d *dialog.Model) tea.Cmd {
			name := strings.TrimSpace(d.Input())
			return m.start(backends.ActionSnapshot, ids, func(ctx context.Context, req action.Request) (string, error) {
				info, err := m.opts.Actions.Snapshot(ctx, req, backends.SnapshotOptions{Name: name})
				return "snapshot " + info.Name + " (" + info.ID + ")", err
			})
		}})
	return nil
}

func (m *Model) revertFlow(c *screen.Context, ids []string) tea.Cmd {
	id := ids[0]
	c.SetStatus("loading snapshots of " + m.name(id) + "...")
	layer, ctx := m.opts.Actions, m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		snaps, err := layer.Snapshots(ctx, id)
		return snapshotsMsg{id: id, snaps: snaps, err: err}
	}
}

// snapshotsMsg carries a sandbox's snapshots for the revert picker.
type snapshotsMsg struct {
	id    string
	snaps []backends.SnapshotInfo
	err   error
}

// pickSnapshot opens the revert picker, newest first; choosing opens the confirmation.
func (m *Model) pickSnapshot(msg snapshotsMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus("revert: " + oneLine(msg.err.Error()))
		return nil
	}
	if len(msg.snaps) == 0 {
		m.setStatus("revert: " + m.name(msg.id) + " has no snapshots" + m.keyProse(keymap.Snapshot, "%s takes one"))
		return nil
	}
	snaps := append([]backends.SnapshotInfo(nil), msg.snaps...)
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].Created.After(snaps[j].Created) })
	id := msg.id
	d := &dialog.Model{Kind: dialog.Picker, Title: "revert " + m.name(id) + " to which snapshot?", Body: []string{"newest first"},
		OnCancel: cancelled("revert")}
	for _, s := range snaps {
		d.Items = append(d.Items, fmt.Sprintf("%s  %s  %s", s.Created.UTC().Format("2006-01-02 15:04:05"), s.Name, s.ID))
	}
	d.OnAccept = func(c *screen.Context, d *dialog.Model) tea.Cmd {
		snap := snaps[d.Cursor].ID
		c.Push(&dialog.Model{Kind: dialog.Confirm, Danger: true, Title: "revert " + m.name(id) + "?",
			Body: []string{"to snapshot " + d.Items[d.Cursor],
				"Stops and removes the current members, recreates them from the snapshot images and restores volume contents. Changes since the snapshot are lost."},
			OnCancel: cancelled("revert"),
			OnAccept: func(*screen.Context, *dialog.Model) tea.Cmd {
				return m.start(backends.ActionRevert, []string{id}, func(ctx context.Context, req action.Request) (string, error) {
					_, err := m.opts.Actions.Revert(ctx, req, snap, backends.RevertOptions{})
					return "reverted to " + snap, err
				})
			}})
		return nil
	}
	m.setStatus("")
	return m.push(d)
}

func (m *Model) teardownFlow(c *screen.Context, ids []string) tea.Cmd {
	d := teardownDialog(m.sandboxes(ids))
	d.OnCancel = cancelled("teardown")
	d.OnAccept = func(*screen.Context, *dialog.Model) tea.Cmd {
		m.fleet.ClearMarks()
		return m.start(backends.ActionTeardown, ids, func(ctx context.Context, req action.Request) (string, error) {
			return "torn down", m.opts.Actions.Teardown(ctx, req, backends.TeardownOptions{})
		})
	}
	c.Push(d)
	return nil
}

func (m *Model) probeFlow(_ *screen.Context, ids []string) tea.Cmd {
	return m.start(backends.ActionProbe, ids, func(ctx context.Context, req action.Request) (string, error) {
		rep, err := m.opts.Actions.Probe(ctx, req, probe.Request{})
		if err != nil {
			return "", err
		}
		return rep.Summary(), nil
	})
}

func (m *Model) copyFlow(c *screen.Context, ids []string) tea.Cmd {
	c.SetStatus("copied " + ids[0] + " (OSC 52)")
	return tea.SetClipboard(ids[0])
}

func (m *Model) cancelFlow(c *screen.Context, ids []string) tea.Cmd {
	layer, id, who := m.opts.Actions, ids[0], m.opts.Identity
	c.SetStatus("cancelling " + m.name(id) + "...")
	return func() tea.Msg {
		ok, err := layer.Cancel(who, id)
		return cancelledMsg{id: id, ok: ok, err: err}
	}
}

type cancelledMsg struct {
	id  string
	ok  bool
	err error // the layer refused (the role)
}

func cancelled(what string) func(*screen.Context, *dialog.Model) tea.Cmd {
	return func(c *screen.Context, _ *dialog.Model) tea.Cmd {
		c.SetStatus(what + ": cancelled")
		return nil
	}
}

// sandboxes are the rows of ids as the fleet knows them (the detail's sandbox when gone).
func (m *Model) sandboxes(ids []string) []backends.Sandbox {
	out := make([]backends.Sandbox, 0, len(ids))
	for _, id := range ids {
		if r, ok := m.fleet.Store().Get(id); ok {
			out = append(out, r.Sandbox())
		} else if m.opts.Supervisor != nil {
			if _, sb, ok := m.opts.Supervisor.Lookup(id); ok {
				out = append(out, sb)
			}
		}
	}
	return out
}

// name is a sandbox's name for messages.
func (m *Model) name(id string) string {
	if r, ok := m.fleet.Store().Get(id); ok {
		return r.SB.Name
	}
	return backends.ShortName(id)
}

// teardownDialog asks for the sandbox name typed exactly (one sandbox) or the count (several),
// and says what the backend will be asked to do.
func teardownDialog(sbs []backends.Sandbox) *dialog.Model {
	d := &dialog.Model{Kind: dialog.Typed, Danger: true}
	if len(sbs) == 1 {
		d.Title = "tear down " + sbs[0].Name + "?"
		d.Require = sbs[0].Name
	} else {
		d.Title = fmt.Sprintf("tear down %d sandboxes?", len(sbs))
		d.Require = strconv.Itoa(len(sbs))
	}
	for i, sb := range sbs {
		if i == 4 && len(sbs) > 5 {
			d.Body = append(d.Body, fmt.Sprintf("... and %d more", len(sbs)-4))
			break
		}
		d.Body = append(d.Body, TeardownPlan(sb))
	}
	d.Body = append(d.Body, "This cannot be undone.")
	return d
}

// TeardownPlan says, per backend, what a teardown will call.
func TeardownPlan(sb backends.Sandbox) string {
	n := len(sb.Members)
	switch sb.Backend {
	case backends.KindDocker:
		return fmt.Sprintf("docker: stop+remove %d container%s, remove networks+volumes labelled com.docker.compose.project=%s, remove its snapshot images",
			n, plural(n), sb.Name)
	case backends.KindKubernetes:
		return fmt.Sprintf("k8s: helm uninstall release %s (%d pod%s)", sb.Name, n, plural(n))
	case backends.KindProxmox:
		return fmt.Sprintf("pve: stop and destroy %d VM%s of %s", n, plural(n), sb.Name)
	}
	return fmt.Sprintf("%s: remove %s and its %d member%s", sb.Backend, sb.Name, n, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// actionDoneMsg reports the end of an action started from the UI.
type actionDoneMsg struct {
	action backends.Action
	ids    []string
	errs   []error
	info   string
}

// start marks ids as running (for progress in place) and returns the command that runs fn on
// each, at most 4 at once, through the action layer.
func (m *Model) start(a backends.Action, ids []string, fn func(ctx context.Context, req action.Request) (string, error)) tea.Cmd {
	now := m.opts.Now()
	for _, id := range ids {
		m.running[id] = runningAction{action: string(a), started: now}
	}
	m.refreshProgress()
	ctx, layer := m.ctx, m.opts.Actions
	reqs := make([]action.Request, len(ids))
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		reqs[i], index[id] = m.request(a, id), i
	}
	return func() tea.Msg {
		infos := make([]string, len(ids))
		errs := layer.Many(ctx, reqs, 4, func(ctx context.Context, req action.Request) error {
			info, err := fn(ctx, req)
			infos[index[req.SandboxID]] = info
			return err
		})
		return actionDoneMsg{action: a, ids: ids, errs: errs, info: infos[0]}
	}
}

// probeReportMsg carries a stored probe report (and the run before it) to the probe screen.
type probeReportMsg struct {
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
			return probeReportMsg{err: err}
		}
		msg := probeReportMsg{rep: reps[len(reps)-1]}
		if len(reps) == 2 {
			msg.prev, msg.hasPrev = reps[0], true
		}
		return msg
	}
}

// handleResult folds the program's own command results in; ok is false for messages that are
// the screens' own.
func (m *Model) handleResult(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case actionDoneMsg:
		var failed []string
		for i, id := range msg.ids {
			delete(m.running, id)
			if msg.errs[i] != nil {
				failed = append(failed, m.name(id)+": "+oneLine(msg.errs[i].Error()))
			}
		}
		switch {
		case len(failed) > 0:
			m.lastError = fmt.Sprintf("%s failed: %s", msg.action, strings.Join(failed, "; "))
			if errors.Is(msg.errs[0], context.Canceled) {
				m.lastError = fmt.Sprintf("%s cancelled: %s", msg.action, strings.Join(failed, "; "))
			}
			m.setStatus(m.lastError)
		case len(msg.ids) == 1:
			m.setStatus(fmt.Sprintf("%s %s done: %s", msg.action, m.name(msg.ids[0]), msg.info))
		default:
			m.setStatus(fmt.Sprintf("%s done on %d sandboxes", msg.action, len(msg.ids)))
		}
		cmds := []tea.Cmd{m.refresh()}
		if msg.action == backends.ActionProbe && len(msg.ids) == 1 && len(failed) == 0 {
			cmds = append(cmds, m.loadProbeReport(msg.ids[0]))
		}
		return tea.Batch(cmds...), true
	case probeReportMsg:
		if msg.err != nil {
			m.setStatus("probe report: " + oneLine(msg.err.Error()))
			return nil, true
		}
		v := probereport.New(msg.rep)
		if msg.hasPrev {
			v = v.WithPrevious(msg.prev)
		}
		return m.push(v), true
	case snapshotsMsg:
		return m.pickSnapshot(msg), true
	case cancelledMsg:
		if msg.err != nil {
			m.setStatus(oneLine(msg.err.Error()))
			return nil, true
		}
		if msg.ok {
			m.setStatus("cancel requested for " + m.name(msg.id))
		} else {
			m.setStatus("nothing to cancel on " + m.name(msg.id))
		}
		return m.refresh(), true
	}
	return nil, false
}

// refresh asks every screen that shows records an action may have changed to reload them.
func (m *Model) refresh() tea.Cmd {
	var cmds []tea.Cmd
	for _, s := range m.stack {
		if r, ok := s.(screen.Refresher); ok {
			c := m.context()
			cmds = append(cmds, r.Refresh(c), m.apply(c))
		}
	}
	return tea.Batch(cmds...)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

func (m *Model) setStatus(s string) { m.status = shown(s) } // redacted: shown.go

// keyProse is " (<prose with the binding's key>)", or "" when the binding does not exist.
func (m *Model) keyProse(n keymap.Name, prose string) string {
	if l := m.keys.Label(n); l != "" {
		return " (" + fmt.Sprintf(prose, l) + ")"
	}
	return ""
}

// refreshProgress writes the running actions into the status line (progress in place); the
// keys it names come from the keymap.
func (m *Model) refreshProgress() {
	if len(m.running) == 0 {
		return
	}
	ids := make([]string, 0, len(m.running))
	for id := range m.running {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	now := m.opts.Now()
	ra := m.running[ids[0]]
	var how []string
	if l := m.keys.Label(keymap.Cancel); l != "" && len(ids) == 1 {
		how = append(how, l+" cancels")
	}
	if l := m.keys.Label(keymap.Tasks); l != "" {
		how = append(how, l+" tasks")
	}
	hint := ""
	if len(how) > 0 {
		hint = " (" + strings.Join(how, ", ") + ")"
	}
	s := fmt.Sprintf("%s %s: running %s%s", ra.action, m.name(ids[0]), now.Sub(ra.started).Round(time.Second), hint)
	if len(ids) > 1 {
		s = fmt.Sprintf("%d actions running: %s %s... %s%s", len(ids), ra.action, m.name(ids[0]), now.Sub(ra.started).Round(time.Second), hint)
	}
	m.setStatus(s)
}

func itoa(n int) string { return strconv.Itoa(n) }
