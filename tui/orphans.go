package tui

import (
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
)

// actionRunning reports an action in flight on a sandbox, from this UI or the action layer.
func (m *Model) actionRunning(sandboxID string) bool {
	if _, ok := m.running[sandboxID]; ok {
		return true
	}
	if m.opts.Actions != nil {
		_, busy := m.opts.Actions.Busy(sandboxID)
		return busy
	}
	return false
}

// sandboxGone reports a sandbox that no longer exists: its backend is connected (so its fleet
// is known) and does not have it. This is the judgement action.OrphanSnapshots makes for
// `snapshots ls --orphans`; a sandbox on an unreachable backend is unseen, not gone.
func (m *Model) sandboxGone(backend, sandboxID string) bool {
	sup := m.opts.Supervisor
	if sup == nil {
		return false
	}
	connected := false
	for _, h := range sup.Health() {
		if h.Backend == backend {
			connected = h.State == supervisor.StateConnected
		}
	}
	if !connected {
		return false
	}
	_, _, ok := sup.Lookup(sandboxID)
	return !ok
}
