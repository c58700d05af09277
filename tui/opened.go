package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/fleet"
)

// Opened is what Options.Open hands the program once the state file is open: the program paints
// its first frame (the live fleet as backends answer) before it has it, so a state file held by
// another process for a moment, or a large inventory cache, never delays the first frame
// (hack/benchfleet/FINDINGS.md, items 3 and 4).
type Opened struct {
	State     *state.DB
	Actions   *action.Layer
	Inventory []state.InventoryRecord // the cache to paint (stale) until backends answer
}

// openedMsg carries Options.Open's result into Update, its cache already made into rows.
type openedMsg struct {
	o     Opened
	cache fleet.PreparedCache
	err   error
}

// open runs Options.Open off the UI goroutine and prepares its cache there too, sorted by the
// table's order at the start (what it still is when the message arrives, unless the operator
// sorted in between: then the cache is sorted again on arrival).
func (m *Model) open() tea.Cmd {
	if m.opts.Open == nil {
		return nil
	}
	open, order := m.opts.Open, m.fleet.Store().Order()
	return func() tea.Msg {
		o, err := open()
		return openedMsg{o: o, cache: prepareCache(o.Inventory, order), err: err}
	}
}

// prepareCache makes the inventory cache's rows and sorts them by order.
func prepareCache(recs []state.InventoryRecord, order fleet.Order) fleet.PreparedCache {
	fleets := make([]fleet.CachedFleet, len(recs))
	for i, rec := range recs {
		fleets[i] = fleet.CachedFleet{Backend: rec.Backend, Sandboxes: rec.Sandboxes}
		if rec.Outlined() {
			fleets[i].Worst, fleets[i].Findings = rec.WorstOf, rec.FindingsOf
		}
	}
	return fleet.PrepareCache(fleets, order)
}

// beginWatch lets a deferred containment watch take its first step, which reads every stored
// baseline: not before the cached fleet is in (watch.Options.Deferred).
func (m *Model) beginWatch() {
	if m.opts.Watch != nil {
		m.opts.Watch.Begin()
	}
}

// installOpened adopts the state file, the action layer and the cache.
func (m *Model) installOpened(msg openedMsg) {
	defer m.beginWatch()
	if msg.err != nil {
		m.setStatus("state file: " + oneLine(msg.err.Error()) + " (journal and actions unavailable)")
		return
	}
	if msg.o.State != nil {
		m.opts.State = msg.o.State
	}
	if msg.o.Actions != nil {
		m.opts.Actions = msg.o.Actions
	}
	m.fleet.LoadPrepared(msg.cache)
}
