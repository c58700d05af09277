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
	"github.com/rangekeeper/rangekeeper/views/dialog"
	"github.com/rangekeeper/rangekeeper/views/fleet"
)

// bindingAction maps sandbox bindings to the action they run.
var bindingAction = map[string]backends.Action{
	"snapshot": backends.ActionSnapshot,
	"revert":   backends.ActionRevert,
	"teardown": backends.ActionTeardown,
	"reset":    backends.ActionReset,
	"probe":    backends.ActionProbe,
}

// Dialog purposes.
const (
	purposeSnapshot = "snapshot"
	purposePick     = "pick-snapshot"
	purposeRevert   = "revert"
	purposeTeardown = "teardown"
	purposeReset    = "reset"
)

// actionDoneMsg reports the end of an action started from the UI.
type actionDoneMsg struct {
	action backends.Action
	ids    []string
	errs   []error
	info   string
}

// snapshotsMsg carries a sandbox's snapshots for the revert picker.
type snapshotsMsg struct {
	id    string
	snaps []backends.SnapshotInfo
	err   error
}

type cancelledMsg struct {
	id string
	ok bool
}

// selectedSandbox is the sandbox the sandbox keys act on: the detail's, else the cursor's.
func (m *Model) selectedSandbox() (*fleet.Row, bool) {
	if m.screen == screenDetail {
		if r, ok := m.fleet.Store().Get(m.detail.SB.ID); ok {
			return r, true
		}
		return &fleet.Row{SB: m.detail.SB, Backend: fleet.BackendOf(m.detail.SB.ID)}, true
	}
	r := m.fleet.Selected()
	return r, r != nil
}

// disabledReason explains why a binding cannot act on the row ("" when it can). It reads only
// in-memory state (the supervisor's fleet and the action layer's locks), never a backend.
func (m *Model) disabledReason(binding string, r *fleet.Row) string {
	switch binding {
	case "author":
		return ""
	case "cancel":
		if r == nil {
			return "cancel: no sandbox selected"
		}
		if _, ok := m.running[r.SB.ID]; !ok {
			if m.opts.Actions == nil {
				return "cancel: no action running on " + r.SB.Name
			}
			if _, busy := m.opts.Actions.Busy(r.SB.ID); !busy {
				return "cancel: no action running on " + r.SB.Name
			}
		}
		return ""
	}
	a, ok := bindingAction[binding]
	if !ok {
		return ""
	}
	if m.opts.Actions == nil {
		return string(a) + ": actions are unavailable (no action layer)"
	}
	if a == backends.ActionProbe && m.opts.Probe == nil {
		return "probe: the probe is not wired into this session"
	}
	if r == nil {
		return string(a) + ": no sandbox selected"
	}
	if r.Stale {
		why := m.fleet.StaleReason(r.Backend)
		if why == "" {
			why = "cached row"
		}
		return fmt.Sprintf("%s: %s is unreachable (%s)", a, r.Backend, why)
	}
	if m.opts.Supervisor != nil {
		if b, _, ok := m.opts.Supervisor.Lookup(r.SB.ID); ok {
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
	if err := m.opts.Actions.Check(action.Request{Action: a, SandboxID: r.SB.ID, Confirmed: true}); err != nil {
		return err.Error()
	}
	return ""
}

// sandboxKey handles the keys that act on the selected sandbox.
func (m *Model) sandboxKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) {
	var name string
	for n := range bindingAction {
		if m.keys.Is(msg, n) {
			name = n
		}
	}
	if name == "" {
		if m.keys.Is(msg, "copy") {
			if r, ok := m.selectedSandbox(); ok {
				m.setStatus("copied " + r.SB.ID + " (OSC 52)")
				return m, tea.SetClipboard(r.SB.ID), true
			}
			return m, nil, true
		}
		return m, nil, false
	}
	r, _ := m.selectedSandbox()
	ids := []string{}
	if r != nil {
		ids = append(ids, r.SB.ID)
	}
	if m.screen == screenFleet && (name == "teardown" || name == "probe") {
		ids = m.fleet.Marked()
		sort.Strings(ids)
	}
	// Bulk: every marked sandbox must be allowed; the first refusal is shown.
	for _, id := range ids {
		row, _ := m.fleet.Store().Get(id)
		if row == nil {
			row = r
		}
		if why := m.disabledReason(name, row); why != "" {
			m.setStatus(why)
			return m, nil, true
		}
	}
	if len(ids) == 0 {
		m.setStatus(name + ": no sandbox selected")
		return m, nil, true
	}
	switch name {
	case "snapshot":
		m.dialog = &dialog.Model{Kind: dialog.Prompt, Purpose: purposeSnapshot, Payload: ids,
			Title: "snapshot " + r.SB.Name, Body: []string{"name (optional; enter for a generated one)"}}
		return m, nil, true
	case "revert":
		m.setStatus("loading snapshots of " + r.SB.Name + "...")
		return m, m.loadSnapshots(r.SB.ID), true
	case "teardown":
		m.dialog = teardownDialog(m.rowsOf(ids))
		return m, nil, true
	case "reset":
		m.dialog = &dialog.Model{Kind: dialog.Confirm, Purpose: purposeReset, Payload: ids, Danger: true,
			Title: "reset " + r.SB.Name + "?", Body: []string{"Recreates every member fresh from its image; state inside the sandbox is lost."}}
		return m, nil, true
	case "probe":
		return m, m.start(backends.ActionProbe, ids, m.probeFn()), true
	}
	return m, nil, false
}

func (m *Model) rowsOf(ids []string) []backends.Sandbox {
	out := make([]backends.Sandbox, 0, len(ids))
	for _, id := range ids {
		if r, ok := m.fleet.Store().Get(id); ok {
			out = append(out, r.SB)
		} else if m.detail.SB.ID == id {
			out = append(out, m.detail.SB)
		}
	}
	return out
}

// teardownDialog asks for the sandbox name typed exactly (one sandbox) or the count (several),
// and says what the backend will be asked to do.
func teardownDialog(sbs []backends.Sandbox) *dialog.Model {
	d := &dialog.Model{Kind: dialog.Typed, Purpose: purposeTeardown, Danger: true}
	for _, sb := range sbs {
		d.Payload = append(d.Payload, sb.ID)
	}
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

func (m *Model) updateDialog(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	d, res := m.dialog.Update(msg)
	m.dialog = &d
	switch res {
	case dialog.Pending:
		return m, nil
	case dialog.Cancelled:
		m.dialog = nil
		m.setStatus(d.Purpose + ": cancelled")
		return m, nil
	}
	m.dialog = nil
	layer := m.opts.Actions
	switch d.Purpose {
	case purposeSnapshot:
		name := strings.TrimSpace(d.Input)
		return m, m.start(backends.ActionSnapshot, d.Payload, func(ctx context.Context, id string) (string, error) {
			info, err := layer.Snapshot(ctx, action.Request{SandboxID: id}, backends.SnapshotOptions{Name: name})
			return "snapshot " + info.Name + " (" + info.ID + ")", err
		})
	case purposePick:
		snap := d.Payload[1+d.Cursor]
		m.dialog = &dialog.Model{Kind: dialog.Confirm, Purpose: purposeRevert, Payload: []string{d.Payload[0], snap}, Danger: true,
			Title: "revert " + fleetName(d.Payload[0]) + "?",
			Body: []string{"to snapshot " + d.Items[d.Cursor],
				"Stops and removes the current members, recreates them from the snapshot images and restores volume contents. Changes since the snapshot are lost."}}
		return m, nil
	case purposeRevert:
		snap := d.Payload[1]
		return m, m.start(backends.ActionRevert, d.Payload[:1], func(ctx context.Context, id string) (string, error) {
			_, err := layer.Revert(ctx, action.Request{SandboxID: id, Confirmed: true}, snap, backends.RevertOptions{})
			return "reverted to " + snap, err
		})
	case purposeTeardown:
		m.fleet.ClearMarks()
		return m, m.start(backends.ActionTeardown, d.Payload, func(ctx context.Context, id string) (string, error) {
			return "torn down", layer.Teardown(ctx, action.Request{SandboxID: id, Confirmed: true}, backends.TeardownOptions{})
		})
	case purposeReset:
		return m, m.start(backends.ActionReset, d.Payload, func(ctx context.Context, id string) (string, error) {
			return "reset", layer.Reset(ctx, action.Request{SandboxID: id, Confirmed: true})
		})
	}
	return m, nil
}

func fleetName(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return id[i+1:]
	}
	return id
}

func (m *Model) probeFn() func(ctx context.Context, id string) (string, error) {
	layer, probe := m.opts.Actions, m.opts.Probe
	return func(ctx context.Context, id string) (string, error) {
		var summary string
		err := layer.Run(ctx, action.Request{Action: backends.ActionProbe, SandboxID: id},
			func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
				var err error
				summary, err = probe(ctx, b, sb)
				return err
			})
		return summary, err
	}
}

// start marks ids as running (for progress in place) and returns the command that runs fn on
// each, at most 4 at once, through the action layer.
func (m *Model) start(a backends.Action, ids []string, fn func(ctx context.Context, id string) (string, error)) tea.Cmd {
	now := m.opts.Now()
	for _, id := range ids {
		m.running[id] = runningAction{action: a, started: now}
	}
	m.refreshProgress()
	ctx := m.ctx
	return func() tea.Msg {
		errs := make([]error, len(ids))
		infos := make([]string, len(ids))
		sem := make(chan struct{}, 4)
		done := make(chan int, len(ids))
		for i, id := range ids {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; done <- i }()
				infos[i], errs[i] = fn(ctx, id)
			}()
		}
		for range ids {
			<-done
		}
		return actionDoneMsg{action: a, ids: ids, errs: errs, info: infos[0]}
	}
}

func (m *Model) loadSnapshots(id string) tea.Cmd {
	layer, ctx := m.opts.Actions, m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		snaps, err := layer.Snapshots(ctx, id)
		return snapshotsMsg{id: id, snaps: snaps, err: err}
	}
}

func (m *Model) cancelSelected() tea.Cmd {
	r, ok := m.selectedSandbox()
	if !ok {
		m.setStatus("cancel: no sandbox selected")
		return nil
	}
	if why := m.disabledReason("cancel", r); why != "" {
		m.setStatus(why)
		return nil
	}
	layer, id := m.opts.Actions, r.SB.ID
	m.setStatus("cancelling " + r.SB.Name + "...")
	return func() tea.Msg { return cancelledMsg{id: id, ok: layer.Cancel(id)} }
}

// handleResult folds the results of commands into the screens.
func (m *Model) handleResult(msg tea.Msg) (tea.Model, tea.Cmd, bool) {
	switch msg := msg.(type) {
	case actionDoneMsg:
		var failed []string
		for i, id := range msg.ids {
			delete(m.running, id)
			if msg.errs[i] != nil {
				failed = append(failed, fleetName(id)+": "+oneLine(msg.errs[i].Error()))
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
			m.setStatus(fmt.Sprintf("%s %s done: %s", msg.action, fleetName(msg.ids[0]), msg.info))
		default:
			m.setStatus(fmt.Sprintf("%s done on %d sandboxes", msg.action, len(msg.ids)))
		}
		m.refreshTasks()
		if msg.action == backends.ActionProbe && len(msg.ids) == 1 && len(failed) == 0 {
			return m, tea.Batch(m.reloadOpen(), m.loadProbeReport(msg.ids[0])), true
		}
		return m, m.reloadOpen(), true
	case probeReportMsg:
		m.openProbeReport(msg)
		return m, nil, true
	case snapshotsMsg:
		if msg.err != nil {
			m.setStatus("revert: " + oneLine(msg.err.Error()))
			return m, nil, true
		}
		if len(msg.snaps) == 0 {
			m.setStatus("revert: " + fleetName(msg.id) + " has no snapshots (s takes one)")
			return m, nil, true
		}
		snaps := append([]backends.SnapshotInfo(nil), msg.snaps...)
		sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].Created.After(snaps[j].Created) })
		d := &dialog.Model{Kind: dialog.Picker, Purpose: purposePick, Payload: []string{msg.id},
			Title: "revert " + fleetName(msg.id) + " to which snapshot?", Body: []string{"newest first"}}
		for _, s := range snaps {
			d.Items = append(d.Items, fmt.Sprintf("%s  %s  %s", s.Created.UTC().Format("2006-01-02 15:04:05"), s.Name, s.ID))
			d.Payload = append(d.Payload, s.ID)
		}
		m.dialog = d
		m.setStatus("")
		return m, nil, true
	case cancelledMsg:
		if msg.ok {
			m.setStatus("cancel requested for " + fleetName(msg.id))
		} else {
			m.setStatus("nothing to cancel on " + fleetName(msg.id))
		}
		m.refreshTasks()
		return m, nil, true
	}
	return m.handleScreenResult(msg)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

func (m *Model) setStatus(s string) { m.fleet.Status = s }

// refreshProgress writes the running actions into the status line (progress in place).
func (m *Model) refreshProgress() {
	if len(m.running) == 0 {
		if m.screen == screenTasks {
			m.refreshTasks()
		}
		return
	}
	ids := make([]string, 0, len(m.running))
	for id := range m.running {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	now := m.opts.Now()
	ra := m.running[ids[0]]
	s := fmt.Sprintf("%s %s: running %s (x cancels, t tasks)", ra.action, fleetName(ids[0]), now.Sub(ra.started).Round(time.Second))
	if len(ids) > 1 {
		s = fmt.Sprintf("%d actions running: %s %s... %s (t tasks)", len(ids), ra.action, fleetName(ids[0]), now.Sub(ra.started).Round(time.Second))
	}
	m.setStatus(s)
	m.refreshTasks()
}

func (m *Model) refreshTasks() {
	if m.opts.Actions != nil {
		m.tasks = m.opts.Actions.Tasks()
	}
}

func (m *Model) openTasks() {
	if m.screen != screenTasks {
		m.prev = m.screen
	}
	m.refreshTasks()
	m.screen = screenTasks
}
