package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// scripted is a backend whose Watch follows a script: fail n times, then list and block.
type scripted struct {
	name     string
	failures int32
	calls    atomic.Int32
	list     []backends.Sandbox
	events   chan backends.Event
}

func (s *scripted) Name() string        { return s.name }
func (s *scripted) Kind() backends.Kind { return backends.KindDocker }
func (s *scripted) Watch(ctx context.Context, emit func(backends.Event)) error {
	n := s.calls.Add(1)
	if n <= s.failures {
		return errors.New("dial unix /nope.sock: connect: no such file or directory")
	}
	emit(backends.Event{Type: backends.EventReset, Sandboxes: s.list})
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-s.events:
			if !ok {
				return errors.New("event stream closed")
			}
			emit(ev)
		}
	}
}

// blocked never answers: a hung backend.
type blocked struct{ name string }

func (b blocked) Name() string        { return b.name }
func (b blocked) Kind() backends.Kind { return backends.KindProxmox }
func (b blocked) Watch(ctx context.Context, emit func(backends.Event)) error {
	<-ctx.Done()
	return nil
}

func sandbox(backend, name string) backends.Sandbox {
	return backends.Sandbox{ID: backend + "/" + name, Name: name, Endpoint: backend, Actionable: true}
}

func waitHealth(t *testing.T, s *Supervisor, backend string, want State) Health {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, h := range s.Health() {
			if h.Backend == backend && h.State == want {
				return h
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never reached %s: %+v", backend, want, s.Health())
	return Health{}
}

// waitVersion waits until the supervisor has applied a backend's events up to version v.
func waitVersion(t *testing.T, s *Supervisor, backend string, v uint64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); s.Version(backend) < v; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed at version %d; want %d", backend, s.Version(backend), v)
		}
	}
}

func TestReconnectsWithBackoffAndReportsTheReason(t *testing.T) {
	flaky := &scripted{name: "docker:flaky", failures: 3, list: []backends.Sandbox{sandbox("docker:flaky", "p1")}, events: make(chan backends.Event)}
	s := New([]backends.Backend{flaky}, Backoff{Min: 10 * time.Millisecond, Max: 40 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	defer func() { cancel(); wait() }()

	h := waitHealth(t, s, "docker:flaky", StateReconnecting)
	if h.LastError == "" || h.Attempts < 1 {
		t.Errorf("reconnecting health lacks the reason or attempt count: %+v", h)
	}
	waitHealth(t, s, "docker:flaky", StateConnected)
	if got := flaky.calls.Load(); got != 4 {
		t.Errorf("Watch called %d times; want 3 failures + 1 success", got)
	}
	if _, sb, ok := s.Lookup("docker:flaky/p1"); !ok || sb.Name != "p1" {
		t.Errorf("Lookup after connect = %v %+v", ok, sb)
	}
	// The updates carried health changes and the reset.
	var resets, healths int
	for _, u := range s.Drain() {
		if u.Event != nil && u.Event.Type == backends.EventReset {
			resets++
		}
		if u.Health != nil {
			healths++
		}
	}
	if resets != 1 || healths < 4 {
		t.Errorf("drained %d resets, %d health updates", resets, healths)
	}
	// A lost stream goes back to reconnecting, then re-lists.
	close(flaky.events)
	waitHealth(t, s, "docker:flaky", StateReconnecting)
}

func TestOneHungBackendDoesNotBlockOthers(t *testing.T) {
	live := &scripted{name: "docker:live", list: []backends.Sandbox{sandbox("docker:live", "a")}, events: make(chan backends.Event, 1)}
	s := New([]backends.Backend{blocked{name: "pve:hung"}, live}, Backoff{Min: 10 * time.Millisecond, Max: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	defer func() { cancel(); wait() }()
	waitHealth(t, s, "docker:live", StateConnected)
	live.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sandbox("docker:live", "b")}
	deadline := time.Now().Add(2 * time.Second)
	for len(s.Fleet()) != 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(s.Fleet()) != 2 {
		t.Fatalf("fleet = %+v", s.Fleet())
	}
	select {
	case <-s.Ready("docker:live"):
	default:
		t.Error("Ready(docker:live) is not closed after its reset")
	}
	select {
	case <-s.Ready("pve:hung"):
		t.Error("Ready(pve:hung) is closed though it never answered")
	default:
	}
	if s.Ready("docker:unknown") != nil {
		t.Error("Ready of a backend the supervisor does not run is not nil")
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer wcancel()
	missing := s.WaitReady(wctx)
	if len(missing) != 1 || missing[0].Backend != "pve:hung" || missing[0].State != StateConnecting {
		t.Errorf("WaitReady missing = %+v; want only the hung backend", missing)
	}
}

func TestResetReplacesOnlyItsOwnBackend(t *testing.T) {
	a := &scripted{name: "docker:a", list: []backends.Sandbox{sandbox("docker:a", "x")}, events: make(chan backends.Event, 1)}
	b := &scripted{name: "docker:ab", list: []backends.Sandbox{sandbox("docker:ab", "y")}, events: make(chan backends.Event, 1)}
	s := New([]backends.Backend{a, b}, Backoff{Min: time.Millisecond, Max: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	defer func() { cancel(); wait() }()
	waitHealth(t, s, "docker:a", StateConnected)
	waitHealth(t, s, "docker:ab", StateConnected)
	a.events <- backends.Event{Type: backends.EventReset, Sandboxes: nil}
	deadline := time.Now().Add(2 * time.Second)
	for len(s.Fleet()) != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	fl := s.Fleet()
	if len(fl) != 1 || fl[0].ID != "docker:ab/y" {
		t.Fatalf("after docker:a reset to empty, fleet = %+v; docker:ab (a name sharing the prefix) must keep its row", fl)
	}
	if bk, _, ok := s.Lookup("docker:ab/y"); !ok || bk.Name() != "docker:ab" {
		t.Errorf("Lookup resolved to the wrong backend")
	}
}

func TestPendingQueueIsBoundedAndCollapsesToResets(t *testing.T) {
	old := MaxPending
	MaxPending = 100
	defer func() { MaxPending = old }()
	live := &scripted{name: "docker:busy", list: []backends.Sandbox{sandbox("docker:busy", "a")}, events: make(chan backends.Event)}
	s := New([]backends.Backend{live}, Backoff{Min: time.Millisecond, Max: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	defer func() { cancel(); wait() }()
	waitHealth(t, s, "docker:busy", StateConnected)
	// Nobody drains while 1,000 events arrive.
	for i := 0; i < 1000; i++ {
		live.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sandbox("docker:busy", fmt.Sprintf("s%03d", i%150))}
	}
	us := s.Drain()
	if len(us) > MaxPending+2 {
		t.Fatalf("%d pending updates; want at most %d", len(us), MaxPending+2)
	}
	// Replaying what was drained gives exactly the supervisor's fleet.
	fleet := map[string]bool{}
	for _, u := range us {
		if u.Event == nil {
			continue
		}
		switch u.Event.Type {
		case backends.EventReset:
			fleet = map[string]bool{}
			for _, sb := range u.Event.Sandboxes {
				fleet[sb.ID] = true
			}
		case backends.EventUpsert:
			fleet[u.Event.Sandbox.ID] = true
		case backends.EventRemove:
			delete(fleet, u.Event.ID)
		}
	}
	if len(fleet) != len(s.Fleet()) || len(fleet) != 151 {
		t.Fatalf("replayed %d sandboxes, supervisor has %d, want 151", len(fleet), len(s.Fleet()))
	}
}

// Events wait folded: a sandbox changed many times between two drains arrives once, in its
// newest state; a reset drops its backend's older events and no other backend's.
func TestPendingEventsAreFolded(t *testing.T) {
	a := &scripted{name: "docker:a", list: []backends.Sandbox{sandbox("docker:a", "x")}, events: make(chan backends.Event)}
	b := &scripted{name: "docker:b", list: []backends.Sandbox{sandbox("docker:b", "y")}, events: make(chan backends.Event)}
	s := New([]backends.Backend{a, b}, Backoff{Min: time.Millisecond, Max: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	defer func() { cancel(); wait() }()
	waitHealth(t, s, "docker:a", StateConnected)
	waitHealth(t, s, "docker:b", StateConnected)
	s.Drain()
	v0 := s.Version("docker:a")

	for i := range 100 {
		sb := sandbox("docker:a", "x")
		sb.Status = backends.Status(fmt.Sprint("gen", i))
		a.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sb}
	}
	vb := s.Version("docker:b")
	b.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sandbox("docker:b", "z")}
	waitVersion(t, s, "docker:b", vb+1)
	a.events <- backends.Event{Type: backends.EventRemove, ID: "docker:a/gone"}
	waitVersion(t, s, "docker:a", v0+101)
	us := s.Drain()
	if len(us) != 3 || us[0].Event.Sandbox.Status != "gen99" || us[1].Event.Sandbox.ID != "docker:b/z" || us[2].Event.ID != "docker:a/gone" {
		t.Fatalf("drained %d updates %+v; want x once at gen99, then z, then the removal", len(us), us)
	}
	if v := s.Version("docker:a"); v != v0+101 {
		t.Errorf("version moved from %d to %d; want one step per applied event", v0, v)
	}

	a.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sandbox("docker:a", "w")}
	b.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sandbox("docker:b", "v")}
	waitVersion(t, s, "docker:b", vb+2)
	a.events <- backends.Event{Type: backends.EventReset, Sandboxes: []backends.Sandbox{sandbox("docker:a", "r")}}
	a.events <- backends.Event{Type: backends.EventUpsert, Sandbox: sandbox("docker:a", "w")}
	waitVersion(t, s, "docker:a", v0+104)
	us = s.Drain()
	var got []string
	for _, u := range us {
		switch u.Event.Type {
		case backends.EventReset:
			got = append(got, "reset "+u.Backend)
		case backends.EventUpsert:
			got = append(got, "upsert "+u.Event.Sandbox.ID)
		}
	}
	if fmt.Sprint(got) != "[upsert docker:b/v reset docker:a upsert docker:a/w]" {
		t.Fatalf("drained %v; want docker:a's upsert before its reset dropped, docker:b's kept", got)
	}
	fleet, v := s.FleetOf("docker:a")
	if len(fleet) != 2 || v != s.Version("docker:a") {
		t.Errorf("FleetOf(docker:a) = %d sandboxes, version %d", len(fleet), v)
	}
}
