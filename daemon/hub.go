package daemon

import (
	"sort"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/operators"
	"github.com/rangekeeper/rangekeeper/tui"
	"github.com/rangekeeper/rangekeeper/views/fleet"
)

// MaxPendingPerSession bounds the fleet updates waiting for one session. A session that does
// not keep up (a frozen client blocks its program) gets, once it catches up, one snapshot of the
// fleet instead of the backlog: its memory stays bounded and nobody else waits for it.
const MaxPendingPerSession = 4096

// Session is one connected client of the daemon (an SSH session's program).
type Session struct {
	ID   int
	Who  action.Identity
	Role operators.Role

	hub  *Hub
	prog *tea.Program
	mail chan struct{} // cap 1: "something is pending"
	done chan struct{}
	end  func() // ends the session (SIGHUP removed its key; the daemon stops)

	mu       sync.Mutex
	pending  []supervisor.Update
	snapshot bool // send the whole fleet (first frame, or after an overflow)
	team     bool // the team line changed
}

// Hub fans one supervisor out to every session: it alone drains the supervisor, then queues
// the updates per session; each session's pump hands them to its program, so a program that
// blocks blocks only its own pump.
type Hub struct {
	sup *supervisor.Supervisor

	mu       sync.Mutex
	sessions map[int]*Session
	next     int
	subs     map[chan struct{}]bool // event feeds (the socket's /v1/events)
	closed   bool                   // the daemon stops: a session that joins is ended at once
}

func newHub(sup *supervisor.Supervisor) *Hub {
	return &Hub{sup: sup, sessions: map[int]*Session{}, subs: map[chan struct{}]bool{}}
}

// Subscribe returns a channel signalled (coalesced) whenever the team changes, and its cancel.
func (h *Hub) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = true
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// run drains the supervisor until done closes.
func (h *Hub) run(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-h.sup.Notify():
			ups := h.sup.Drain()
			for _, s := range h.list() {
				s.push(ups)
			}
		}
	}
}

func (h *Hub) list() []*Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		out = append(out, s)
	}
	return out
}

// Join registers a session; its first delivery is the whole fleet. end is how the daemon ends it.
// Once the daemon stops (close), the session is ended as soon as it joins.
func (h *Hub) Join(who action.Identity, role operators.Role, end func()) *Session {
	h.mu.Lock()
	h.next++
	s := &Session{ID: h.next, Who: who, Role: role, hub: h, mail: make(chan struct{}, 1), done: make(chan struct{}), end: end, snapshot: true}
	h.sessions[s.ID] = s
	closed := h.closed
	h.mu.Unlock()
	if closed && end != nil {
		go end()
	}
	h.TeamChanged()
	return s
}

// close refuses the sessions that join from now on (the daemon stops).
func (h *Hub) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
}

// Leave unregisters a session.
func (s *Session) Leave() {
	h := s.hub
	h.mu.Lock()
	_, ok := h.sessions[s.ID]
	delete(h.sessions, s.ID)
	h.mu.Unlock()
	if ok {
		close(s.done)
		h.TeamChanged()
	}
}

// Count is the number of sessions.
func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Present lists the operators connected, once each.
func (h *Hub) Present() []string {
	h.mu.Lock()
	seen := map[string]bool{}
	for _, s := range h.sessions {
		seen[s.Who.Operator] = true
	}
	h.mu.Unlock()
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TeamChanged asks every session to redraw its team line (a task or the presence changed).
func (h *Hub) TeamChanged() {
	h.mu.Lock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	h.mu.Unlock()
	for _, s := range h.list() {
		s.mu.Lock()
		s.team = true
		s.mu.Unlock()
		s.signal()
	}
}

func (s *Session) signal() {
	select {
	case s.mail <- struct{}{}:
	default:
	}
}

func (s *Session) push(ups []supervisor.Update) {
	s.mu.Lock()
	if !s.snapshot {
		if len(s.pending)+len(ups) > MaxPendingPerSession {
			s.pending, s.snapshot = nil, true
		} else {
			s.pending = append(s.pending, ups...)
		}
	}
	s.mu.Unlock()
	s.signal()
}

// Attach starts delivering to the session's program; it returns when the session leaves.
func (s *Session) Attach(p *tea.Program) {
	s.prog = p
	go s.pump()
}

func (s *Session) pump() {
	for {
		select {
		case <-s.done:
			return
		case <-s.mail:
		}
		s.mu.Lock()
		ups, snap, team := s.pending, s.snapshot, s.team
		s.pending, s.snapshot, s.team = nil, false, false
		s.mu.Unlock()
		if snap {
			ups = s.hub.snapshot()
		}
		// Send blocks while the program is busy (or its client frozen): only this pump waits,
		// and what arrives meanwhile folds into the next delivery.
		if len(ups) > 0 {
			s.prog.Send(fleet.Prepare(ups)) // built on this pump, not in the program
		}
		if team {
			s.prog.Send(tui.TeamMsg{})
		}
	}
}

// snapshot is the whole fleet as one reset per backend, with its health.
func (h *Hub) snapshot() []supervisor.Update {
	by := h.sup.FleetByBackend()
	var out []supervisor.Update
	for _, hl := range h.sup.Health() {
		hl := hl
		out = append(out, supervisor.Update{Backend: hl.Backend, Health: &hl},
			supervisor.Update{Backend: hl.Backend, Event: &backends.Event{Type: backends.EventReset, Sandboxes: by[hl.Backend]}})
	}
	return out
}

// endWhere ends the sessions keep refuses (SIGHUP: keys removed from the operators file).
func (h *Hub) endWhere(drop func(*Session) bool) int {
	n := 0
	for _, s := range h.list() {
		if drop(s) {
			n++
			s.end()
		}
	}
	return n
}

// Identities lists who is connected, one entry per session.
func (h *Hub) Identities() []action.Identity {
	var out []action.Identity
	for _, s := range h.list() {
		out = append(out, s.Who)
	}
	return out
}
