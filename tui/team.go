package tui

import (
	"context"
	"sort"
	"strings"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// TeamOptions make the program one session of a team daemon (rangekeeper serve): many programs
// share one supervisor and one action layer.
type TeamOptions struct {
	// Shared: the daemon sends fleet.UpdatesMsg to every session (one supervisor, many
	// programs); the program does not drain the supervisor itself.
	Shared bool
	// Context outlives the session: actions started from it run on when the session drops.
	Context context.Context
	// Allow keeps the bindings of the action kinds the operator's role may take (bulk: on many
	// marked sandboxes); the others do not exist in this session's footer, help or keys.
	Allow func(a backends.Action, bulk bool) bool
	// Present lists the operators connected, for the title line.
	Present func() []string
	// Notice is shown after them to everyone (the actions a restart found interrupted).
	Notice func() string
	// AuthorizeAck refuses an alert acknowledgement the operator's role may not make (a
	// viewer's); watch.Ack asks it and journals the refusal. nil permits it.
	AuthorizeAck func(who action.Identity) error
}

// TeamMsg tells a session that something shared changed (a task started, moved or ended; an
// operator came or went): it redraws.
type TeamMsg struct{}

// teamKeys drops the bindings the role may not use. A bulk kind the role may take one sandbox
// at a time keeps its key, acting on the selected sandbox only.
func (o TeamOptions) teamKeys(km *keymap.Map) *keymap.Map {
	if o.Allow == nil {
		return km
	}
	acts := false // cancelling needs a role that acts; a viewer only watches
	for _, a := range backends.Actions() {
		acts = acts || o.Allow(a, false)
	}
	var keep []keymap.Binding
	for _, b := range km.All() {
		switch {
		case b.Action != "":
			if !o.Allow(b.Action, false) {
				continue
			}
			b.Bulk = b.Bulk && o.Allow(b.Action, true)
		case b.Name == keymap.Cancel && !acts:
			continue
		case b.Name == keymap.Verify && !o.Allow(backends.ActionVerify, false): // the author's
			continue
		}
		keep = append(keep, b)
	}
	return keymap.NewMap(keep)
}

// teamInit shows, in every session, what every operator runs: rows name the action, the title
// the operators connected and who runs what ("snapshotting · alice web-1").
func (m *Model) teamInit() {
	if !m.opts.Team.Shared {
		return
	}
	if m.opts.Team.Context != nil {
		m.ctx, m.cancel = m.opts.Team.Context, func() {}
	}
	layer := m.opts.Actions
	own := m.fleet.Activity // this session's own progress, the watch's quarantine mark
	m.fleet.Activity = func(id string) string {
		if layer != nil {
			if a, who, busy := layer.BusyBy(id); busy {
				return Activity(a, who)
			}
		}
		return own(id)
	}
	m.fleet.Team = func() string {
		line := teamLine(m.opts.Team.Present, layer)
		if m.opts.Team.Notice != nil {
			if n := m.opts.Team.Notice(); n != "" {
				line += " · " + n
			}
		}
		return line
	}
}

// teamLine is "team: alice bob · snapshotting · alice web-1".
func teamLine(present func() []string, layer *action.Layer) string {
	var parts []string
	if present != nil {
		names := present()
		sort.Strings(names)
		parts = append(parts, "team: "+strings.Join(names, " "))
	}
	if layer != nil {
		for _, t := range layer.Tasks() {
			if t.Status != action.TaskRunning {
				continue
			}
			s := Gerund(t.Action)
			if t.By.Operator != "" {
				s += " · " + t.By.Operator
			}
			parts = append(parts, s+" "+backends.ShortName(t.Target))
		}
	}
	return strings.Join(parts, " · ")
}

// Activity is what a busy sandbox's row shows: "reverting · alice" when a team identity runs
// the action, the action's name alone when the process's own operator does (standalone).
func Activity(a backends.Action, who action.Identity) string {
	if who.Operator == "" || who.Transport == action.TransportStandalone {
		return string(a)
	}
	return Gerund(a) + " · " + who.Operator
}

// Gerund names a running action: "snapshotting", "tearing down" (the kind's declaration).
func Gerund(a backends.Action) string { return a.Gerund() }

// Keys is this session's keymap: the bindings its mode and role left, with their guards.
func (m *Model) Keys() *keymap.Map { return m.keys }
