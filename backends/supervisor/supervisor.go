// Package supervisor runs every configured backend's watch loop, tracks each backend's health,
// reconnects with backoff, and keeps the merged fleet so actions can resolve a sandbox ID. One dead
// or slow backend never blocks the others: events are queued per supervisor and drained in batches.
package supervisor

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// State is a backend's connection state.
type State string

const (
	StateConnecting   State = "connecting"
	StateConnected    State = "connected"
	StateReconnecting State = "reconnecting"
)

// Health is one backend's connection health.
type Health struct {
	Backend   string        `json:"backend"`
	Kind      backends.Kind `json:"kind"`
	State     State         `json:"state"`
	LastError string        `json:"last_error,omitempty"`
	Since     time.Time     `json:"since"`
	Attempts  int           `json:"attempts,omitempty"`
	NextRetry time.Time     `json:"next_retry,omitempty"`
}

// Update is one item of the supervisor's output: a fleet event from Backend, or a health change.
type Update struct {
	Backend string
	Event   *backends.Event
	Health  *Health
}

// Backoff bounds reconnect delays.
type Backoff struct{ Min, Max time.Duration }

// DefaultBackoff starts fast and caps at 30 s.
var DefaultBackoff = Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}

// Supervisor owns the backends' goroutines.
type Supervisor struct {
	backends []backends.Backend
	backoff  Backoff

	mu      sync.Mutex
	pending []Update
	// queued is where each sandbox's newest event sits in pending (by sandbox ID), so a burst
	// of events for one sandbox reaches the consumer as one.
	queued  map[string]int
	notify  chan struct{}
	health  map[string]Health
	fleet   map[string]map[string]backends.Sandbox // backend name → sandbox ID → sandbox
	version map[string]uint64                      // backend name → bumped at every change
	owner   map[string]backends.Backend            // backend name → backend
	ready   map[string]chan struct{}               // closed at a backend's first reset
	changed chan struct{}                          // closed at the next fleet change (FleetNotify)

	activity activityLog // what happened to sandboxes, for readers with a cursor (activity.go)
}

// New prepares a supervisor; nothing runs until Start.
func New(bs []backends.Backend, backoff Backoff) *Supervisor {
	if backoff.Min <= 0 {
		backoff = DefaultBackoff
	}
	s := &Supervisor{
		backends: bs, backoff: backoff,
		notify: make(chan struct{}, 1),
		queued: map[string]int{},
		health: map[string]Health{}, fleet: map[string]map[string]backends.Sandbox{}, version: map[string]uint64{},
		owner: map[string]backends.Backend{}, ready: map[string]chan struct{}{},
	}
	now := time.Now()
	for _, b := range bs {
		s.owner[b.Name()] = b
		s.fleet[b.Name()] = map[string]backends.Sandbox{}
		s.ready[b.Name()] = make(chan struct{})
		s.health[b.Name()] = Health{Backend: b.Name(), Kind: b.Kind(), State: StateConnecting, Since: now}
	}
	return s
}

// Backends returns the supervised backends.
func (s *Supervisor) Backends() []backends.Backend { return s.backends }

// Start runs one goroutine per backend until ctx is done. The returned function waits for them.
func (s *Supervisor) Start(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	for _, b := range s.backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx, b)
		}()
	}
	return wg.Wait
}

func (s *Supervisor) run(ctx context.Context, b backends.Backend) {
	delay := s.backoff.Min
	attempts := 0
	for {
		gotReset := false
		err := b.Watch(ctx, func(ev backends.Event) {
			if ev.Type == backends.EventReset {
				gotReset = true
				s.setHealth(b, Health{State: StateConnected})
			}
			s.apply(b, ev)
		})
		if ctx.Err() != nil {
			return
		}
		if gotReset {
			delay, attempts = s.backoff.Min, 0
		}
		attempts++
		msg := "watch ended"
		if err != nil {
			msg = err.Error()
		}
		s.setHealth(b, Health{State: StateReconnecting, LastError: msg, Attempts: attempts, NextRetry: time.Now().Add(delay)})
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay *= 2
		if delay > s.backoff.Max {
			delay = s.backoff.Max
		}
	}
}

func (s *Supervisor) setHealth(b backends.Backend, h Health) {
	h.Backend, h.Kind = b.Name(), b.Kind()
	s.mu.Lock()
	prev := s.health[b.Name()]
	if prev.State == h.State && prev.LastError == h.LastError && h.State == StateConnected {
		s.mu.Unlock()
		return
	}
	h.Since = time.Now()
	if prev.State == h.State {
		h.Since = prev.Since
	}
	s.health[b.Name()] = h
	s.pending = append(s.pending, Update{Backend: b.Name(), Health: &h})
	s.mu.Unlock()
	s.signal()
}

func (s *Supervisor) apply(b backends.Backend, ev backends.Event) {
	if ev.Type == backends.EventActivity {
		if ev.Activity != nil {
			s.activity.add(*ev.Activity)
		}
		return
	}
	name := b.Name()
	s.mu.Lock()
	fleet := s.fleet[name]
	switch ev.Type {
	case backends.EventReset:
		fleet = make(map[string]backends.Sandbox, len(ev.Sandboxes))
		for _, sb := range ev.Sandboxes {
			fleet[sb.ID] = sb
		}
		s.fleet[name] = fleet
		if ch := s.ready[name]; ch != nil {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
	case backends.EventUpsert:
		fleet[ev.Sandbox.ID] = ev.Sandbox
	case backends.EventRemove:
		delete(fleet, ev.ID)
	}
	s.version[name]++
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	s.enqueue(name, ev)
	if len(s.pending) > MaxPending {
		s.collapsePending()
	}
	s.mu.Unlock()
	s.signal()
}

// enqueue adds one event for the consumer, folding it into what is already pending: a reset
// drops the backend's older events (it replaces all of them), and an upsert or removal replaces
// a pending event of the same sandbox. s.mu held.
func (s *Supervisor) enqueue(backend string, ev backends.Event) {
	id := ev.ID
	if ev.Type == backends.EventUpsert {
		id = ev.Sandbox.ID
	}
	if i, ok := s.queued[id]; ok && ev.Type != backends.EventReset {
		*s.pending[i].Event = ev // not drained yet: nobody else holds it
		return
	}
	e := ev
	u := Update{Backend: backend, Event: &e}
	if ev.Type == backends.EventReset {
		kept := s.pending[:0]
		for _, p := range s.pending {
			if p.Event == nil || p.Backend != backend {
				kept = append(kept, p)
			}
		}
		clear(s.pending[len(kept):]) // let the dropped events' sandboxes be collected
		s.pending = append(kept, u)
		s.reindex()
		return
	}
	s.queued[id] = len(s.pending)
	s.pending = append(s.pending, u)
}

// reindex rebuilds queued after pending was rewritten. s.mu held.
func (s *Supervisor) reindex() {
	clear(s.queued)
	for i, p := range s.pending {
		switch {
		case p.Event == nil || p.Event.Type == backends.EventReset:
		case p.Event.Type == backends.EventUpsert:
			s.queued[p.Event.Sandbox.ID] = i
		default:
			s.queued[p.Event.ID] = i
		}
	}
}

// MaxPending bounds the updates waiting for a consumer. Past it the queue collapses into one
// reset per backend built from the current fleet: a slow consumer then catches up in one step
// and memory stays bounded whatever the event rate.
var MaxPending = 50_000

// collapsePending replaces the queue with the latest health and one reset per backend. s.mu held.
func (s *Supervisor) collapsePending() {
	by := s.byBackend()
	clear(s.pending)
	s.pending = s.pending[:0]
	for _, b := range s.backends {
		h := s.health[b.Name()]
		s.pending = append(s.pending, Update{Backend: b.Name(), Health: &h},
			Update{Backend: b.Name(), Event: &backends.Event{Type: backends.EventReset, Sandboxes: by[b.Name()]}})
	}
	s.reindex()
}

func (s *Supervisor) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Notify is signalled (coalesced) whenever updates are pending.
func (s *Supervisor) Notify() <-chan struct{} { return s.notify }

// Drain returns and clears every pending update, oldest first. Events are folded while they
// wait: a sandbox changed many times since the last Drain appears once, with its newest state,
// and a backend's reset replaces its older events.
func (s *Supervisor) Drain() []Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	clear(s.queued)
	return out
}

// Health returns every backend's health sorted by name.
func (s *Supervisor) Health() []Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Health, 0, len(s.health))
	for _, h := range s.health {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Backend < out[j].Backend })
	return out
}

// Lookup resolves a sandbox ID to its backend and last known state.
func (s *Supervisor) Lookup(id string) (backends.Backend, backends.Sandbox, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.ownerOf(id)
	if b == nil {
		return nil, backends.Sandbox{}, false
	}
	sb, ok := s.fleet[b.Name()][id]
	return b, sb, ok
}

// RecentExecs implements backends.ExecLines for the whole fleet: the exec command lines the
// backend owning the sandbox remembers, or nil when it keeps none. Lines are the owner's, in its
// memory; the supervisor neither copies nor keeps them.
func (s *Supervisor) RecentExecs(id string) []string {
	s.mu.Lock()
	b := s.ownerOf(id)
	s.mu.Unlock()
	if x, ok := b.(backends.ExecLines); ok {
		return x.RecentExecs(id)
	}
	return nil
}

// ownerOf finds the backend whose name prefixes a sandbox ID ("docker:default/" + project).
func (s *Supervisor) ownerOf(id string) backends.Backend {
	var best backends.Backend
	for name, b := range s.owner {
		if strings.HasPrefix(id, name+"/") && (best == nil || len(name) > len(best.Name())) {
			best = b
		}
	}
	return best
}

// Fleet returns every known sandbox sorted by ID.
func (s *Supervisor) Fleet() []backends.Sandbox {
	s.mu.Lock()
	n := 0
	for _, f := range s.fleet {
		n += len(f)
	}
	out := make([]backends.Sandbox, 0, n)
	for _, f := range s.fleet {
		for _, sb := range f {
			out = append(out, sb)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// FleetOf returns one backend's sandboxes (unsorted) and its version: a number that changes
// whenever the backend's fleet does. A caller that saves or exports the fleet periodically can
// skip the work when the version is the one it last handled.
func (s *Supervisor) FleetOf(backend string) ([]backends.Sandbox, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fleet[backend]
	out := make([]backends.Sandbox, 0, len(f))
	for _, sb := range f {
		out = append(out, sb)
	}
	return out, s.version[backend]
}

// FleetNotify returns a channel closed at the next change of any backend's fleet (a version
// moves): readers other than the UI's Drain wait on it, then compare versions, instead of
// polling. Any number of readers may wait on one channel.
func (s *Supervisor) FleetNotify() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// Version is FleetOf's version alone: it costs nothing, so a periodic caller asks it first.
func (s *Supervisor) Version(backend string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version[backend]
}

// FleetByBackend returns every backend's sandboxes (an empty, non-nil slice for a backend with
// none), keyed by backend name.
func (s *Supervisor) FleetByBackend() map[string][]backends.Sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byBackend()
}

// byBackend groups the fleet by owning backend. s.mu held.
func (s *Supervisor) byBackend() map[string][]backends.Sandbox {
	by := make(map[string][]backends.Sandbox, len(s.backends))
	for _, b := range s.backends {
		f := s.fleet[b.Name()]
		out := make([]backends.Sandbox, 0, len(f))
		for _, sb := range f {
			out = append(out, sb)
		}
		by[b.Name()] = out
	}
	return by
}

// Ready is closed when the named backend has answered once (its first reset); nil for a name
// the supervisor does not run. A one-shot listing can print each backend's sandboxes as soon
// as that backend answers (FleetOf) instead of waiting for the slowest.
func (s *Supervisor) Ready(backend string) <-chan struct{} { return s.ready[backend] }

// WaitReady blocks until every backend has answered once, or ctx ends. It returns the backends
// that never answered, with their health, so one-shot commands can report them and go on.
func (s *Supervisor) WaitReady(ctx context.Context) []Health {
	for _, b := range s.backends {
		select {
		case <-s.ready[b.Name()]:
		case <-ctx.Done():
		}
	}
	var missing []Health
	for _, b := range s.backends {
		select {
		case <-s.ready[b.Name()]:
		default:
			s.mu.Lock()
			missing = append(missing, s.health[b.Name()])
			s.mu.Unlock()
		}
	}
	return missing
}
