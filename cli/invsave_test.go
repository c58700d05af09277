package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/state"
)

// chanBackend emits what the test sends it (nothing sent: it never answers).
type chanBackend struct {
	name string
	kind backends.Kind // "": docker
	evs  chan backends.Event
}

func (b *chanBackend) Name() string { return b.name }
func (b *chanBackend) Kind() backends.Kind {
	if b.kind == "" {
		return backends.KindDocker
	}
	return b.kind
}
func (b *chanBackend) Watch(ctx context.Context, emit func(backends.Event)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-b.evs:
			emit(ev)
		}
	}
}

func openState(t testing.TB) *state.DB {
	t.Helper()
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func startSupervisor(t testing.TB, bs ...backends.Backend) *supervisor.Supervisor {
	t.Helper()
	s := supervisor.New(bs, supervisor.DefaultBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	t.Cleanup(func() { cancel(); wait() })
	return s
}

func cachedNames(t *testing.T, db *state.DB, backend string) []string {
	t.Helper()
	recs, err := db.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Backend == backend {
			var names []string
			for _, sb := range r.Sandboxes {
				names = append(names, sb.Name)
			}
			return names
		}
	}
	return nil
}

func waitVersion(t *testing.T, s *supervisor.Supervisor, backend string, v uint64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); s.Version(backend) < v; {
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached version %d", backend, v)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestInventorySaverWritesOnlyBackendsThatChanged(t *testing.T) {
	db := openState(t)
	b := &chanBackend{name: "docker:a", evs: make(chan backends.Event)}
	s := startSupervisor(t, b)
	b.evs <- backends.Event{Type: backends.EventReset, Sandboxes: []backends.Sandbox{{ID: "docker:a/one", Name: "one"}}}
	waitVersion(t, s, "docker:a", 1)
	for s.Health()[0].State != supervisor.StateConnected {
		time.Sleep(time.Millisecond)
	}
	v := newInventorySaver(db, s)
	if err := v.Save(); err != nil {
		t.Fatal(err)
	}
	if got := cachedNames(t, db, "docker:a"); fmt.Sprint(got) != "[one]" {
		t.Fatalf("first save: cached %v", got)
	}
	// Someone else's record in its place shows whether the next save writes at all.
	if err := db.SaveInventory(state.InventoryRecord{Backend: "docker:a", Sandboxes: []backends.Sandbox{{ID: "x", Name: "marker"}}}); err != nil {
		t.Fatal(err)
	}
	if err := v.Save(); err != nil {
		t.Fatal(err)
	}
	if got := cachedNames(t, db, "docker:a"); fmt.Sprint(got) != "[marker]" {
		t.Fatalf("an unchanged fleet was written again: cached %v", got)
	}
	b.evs <- backends.Event{Type: backends.EventUpsert, Sandbox: backends.Sandbox{ID: "docker:a/two", Name: "two"}}
	waitVersion(t, s, "docker:a", 2)
	if err := v.Save(); err != nil {
		t.Fatal(err)
	}
	got := cachedNames(t, db, "docker:a")
	if len(got) != 2 {
		t.Fatalf("a changed fleet was not written: cached %v", got)
	}
}

func TestInventorySaverKeepsTheCacheOfABackendThatIsDown(t *testing.T) {
	db := openState(t)
	if err := db.SaveInventory(state.InventoryRecord{Backend: "docker:down", Sandboxes: []backends.Sandbox{{ID: "docker:down/old", Name: "old"}}}); err != nil {
		t.Fatal(err)
	}
	s := startSupervisor(t, &chanBackend{name: "docker:down", evs: make(chan backends.Event)}) // never answers
	if err := newInventorySaver(db, s).Save(); err != nil {
		t.Fatal(err)
	}
	if got := cachedNames(t, db, "docker:down"); fmt.Sprint(got) != "[old]" {
		t.Fatalf("the last good cache of a backend that never answered was replaced: %v", got)
	}
}

// BenchmarkInventorySaveIdle is the TUI's periodic cache save on an idle 10,000-sandbox fleet
// (hack/benchfleet/FINDINGS.md, item 1): it must cost nothing when no backend's fleet moved.
func BenchmarkInventorySaveIdle(b *testing.B) {
	db := openState(b)
	sim := simfleet.New("sim", backends.KindKubernetes, 10_000, 0)
	s := startSupervisor(b, sim)
	<-s.Ready(sim.Name())
	for s.Health()[0].State != supervisor.StateConnected {
		time.Sleep(time.Millisecond)
	}
	v := newInventorySaver(db, s)
	if err := v.Save(); err != nil { // the first save writes
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Save(); err != nil {
			b.Fatal(err)
		}
	}
}
