package fleet

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
)

// consistent fails unless the index is what a from-scratch Compute makes of the rows and
// indexed holds exactly the index's rows.
func consistent(t *testing.T, s *Store, step int) {
	t.Helper()
	if got, want := ids(s), fromScratch(s); !slices.Equal(got, want) {
		t.Fatalf("step %d: index diverged from a full recompute\n got %v\nwant %v", step, got, want)
	}
	if len(s.indexed) != s.Len() {
		t.Fatalf("step %d: %d rows indexed by ID, %d shown", step, len(s.indexed), s.Len())
	}
	for i := range s.Len() {
		if r := s.At(i); s.indexed[r.SB.ID] != r {
			t.Fatalf("step %d: row %d (%s) is not the one indexed by its ID", step, i, r.SB.ID)
		}
		if cur, _ := s.Get(s.At(i).SB.ID); cur != s.At(i) {
			t.Fatalf("step %d: row %d (%s) shown is not the stored one", step, i, s.At(i).SB.ID)
		}
	}
}

// TestBulkPathsEqualFullRecompute drives the paths that touch many rows at once (resets past
// the incremental limit, a backend going stale and back, a computed index installed after many
// changes) among single events, as the fleet screen does: a large reset is followed by a
// Compute that supersedes any pending one. Whenever no large reset awaits its Compute, the index
// must be what a from-scratch Compute makes.
func TestBulkPathsEqualFullRecompute(t *testing.T) {
	for _, order := range []Order{{Col: ColName}, {Col: ColSev, Desc: true}, {Col: ColAge, Group: GroupTask}, {Col: ColStatus, Group: GroupBackend}} {
		t.Run(fmt.Sprintf("%v-%v-%v", order.Col, order.Desc, order.Group), func(t *testing.T) {
			rng := rand.New(rand.NewSource(7))
			s := NewStore()
			q, _ := ParseQuery("!crypto")
			s.Install(Compute(s.Snapshot(q, order)))
			var pending *Snapshot // a computation in flight
			resetPending := false // a large reset awaits that computation
			for step := range 400 {
				backend := []string{"docker:a", "docker:b"}[rng.Intn(2)]
				switch op := rng.Intn(20); {
				case op < 9:
					x := sb(backend, rng.Intn(1500))
					x.Status = []backends.Status{backends.StatusRunning, backends.StatusStopped}[rng.Intn(2)]
					s.ApplyEvent(backend, backends.Event{Type: backends.EventUpsert, Sandbox: x})
				case op < 12:
					s.ApplyEvent(backend, backends.Event{Type: backends.EventRemove, ID: sb(backend, rng.Intn(1500)).ID})
				case op < 14:
					s.MarkBackend(backend, rng.Intn(2) == 0)
				case op < 16:
					var list []backends.Sandbox
					n := rng.Intn(40)
					if rng.Intn(2) == 0 {
						n = incrementalResetLimit + rng.Intn(600)
					}
					for range n {
						list = append(list, sb(backend, rng.Intn(1500)))
					}
					if s.ApplyEvent(backend, backends.Event{Type: backends.EventReset, Sandboxes: list}) {
						snap := s.Snapshot(s.Query(), s.Order())
						pending, resetPending = &snap, true
					}
				case op < 18:
					if pending == nil { // a filter or sort the operator asked for
						snap := s.Snapshot(s.Query(), s.Order())
						pending = &snap
					}
				default:
					if pending != nil {
						s.Install(Compute(*pending))
						pending, resetPending = nil, false
					}
				}
				if !resetPending {
					consistent(t, s, step)
				} else if !slices.IsSortedFunc(s.index, s.order.Compare) {
					t.Fatalf("step %d: index out of order while a reset awaits its Compute", step) // binary searches would miss
				}
			}
		})
	}
}

// TestMarkBackendFlipsEveryRowOfItsBackendOnly: rows greyed and back, in place, the other
// backend's untouched.
func TestMarkBackendFlipsEveryRowOfItsBackendOnly(t *testing.T) {
	s := NewStore()
	for i := range 100 {
		s.Put(NewRow("docker:a", sb("docker:a", i), false))
		s.Put(NewRow("docker:b", sb("docker:b", i), false))
	}
	before := ids(s)
	s.MarkBackend("docker:a", true)
	for i := range s.Len() {
		if r := s.At(i); r.Stale != (r.Backend == "docker:a") {
			t.Fatalf("%s stale=%v after docker:a went stale", r.SB.ID, r.Stale)
		}
	}
	if !slices.Equal(ids(s), before) {
		t.Fatal("marking a backend stale moved rows")
	}
	s.MarkBackend("docker:a", false)
	for i := range s.Len() {
		if s.At(i).Stale {
			t.Fatalf("%s still stale after its backend came back", s.At(i).SB.ID)
		}
	}
}

// TestPreparedUpdatesApplyAsUpdates: a batch whose reset rows were built off the UI goroutine
// leaves the screen as the same batch applied raw does, for small and large resets.
func TestPreparedUpdatesApplyAsUpdates(t *testing.T) {
	for _, n := range []int{3, incrementalResetLimit + 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var list []backends.Sandbox
			for i := range n {
				list = append(list, sb("docker:a", i))
			}
			reset := backends.Event{Type: backends.EventReset, Sandboxes: list}
			up := backends.Event{Type: backends.EventUpsert, Sandbox: sb("docker:a", 5000)}
			batch := []supervisor.Update{health("docker:a", supervisor.StateConnected, nil),
				{Backend: "docker:a", Event: &reset}, {Backend: "docker:a", Event: &up}}

			raw, prepared := fleetOf(0), fleetOf(0)
			raw = settle(raw, raw.ApplyUpdates(batch))
			prepared, cmd := prepared.Update(Prepare(batch))
			prepared = settle(prepared, cmd)
			if got, want := shownIDs(&prepared), shownIDs(&raw); len(got) != n+1 || !slices.Equal(got, want) {
				t.Fatalf("prepared batch shows %d rows, raw %d; equal=%v", len(got), len(want), slices.Equal(got, want))
			}
		})
	}
}

// BenchmarkResetOnTheUIGoroutine25k is what a 25,000-sandbox reset (a 50,000-pod cluster's
// first list) costs the UI goroutine, a key press waiting behind it: the batch applied, then
// its computed index installed. "prepared" is the app's road (rows built in the command that
// drained the supervisor); "raw" builds them in Update, as before (50–120 ms).
// ui-ms/op is the UI goroutine's wall time only (the Compute runs off it, untimed).
func BenchmarkResetOnTheUIGoroutine25k(b *testing.B) {
	const n = 25_000
	sbs := make([]backends.Sandbox, n)
	for i := range sbs {
		sbs[i] = benchSandbox(i)
	}
	ev := backends.Event{Type: backends.EventReset, Sandboxes: sbs}
	batch := []supervisor.Update{{Backend: "docker:bench", Event: &ev}}
	for _, prepared := range []bool{true, false} {
		b.Run(map[bool]string{true: "prepared", false: "raw"}[prepared], func(b *testing.B) {
			m := benchModel(b, 0)
			var ui time.Duration
			for b.Loop() {
				var msg UpdatesMsg
				if prepared {
					msg = Prepare(batch)
				} else {
					msg = UpdatesMsg{Updates: batch}
				}
				t0 := time.Now()
				m2, cmd := m.Update(msg)
				ui += time.Since(t0)
				computed := cmd()
				t0 = time.Now()
				m, _ = m2.Update(computed)
				_ = m.View()
				ui += time.Since(t0)
				if m.Store().Len() != n {
					b.Fatalf("%d rows shown", m.Store().Len())
				}
			}
			b.ReportMetric(float64(ui.Microseconds())/1000/float64(b.N), "ui-ms/op")
		})
	}
}

// BenchmarkMarkBackend25k greys 25,000 rows and back (a backend lost and found; a restart's
// cached rows when their backend answers): it was a sorted re-insert per row, 0.3 s.
func BenchmarkMarkBackend25k(b *testing.B) {
	m := benchModel(b, 25_000)
	stale := false
	for b.Loop() {
		stale = !stale
		m.store.MarkBackend("docker:bench", stale)
	}
}
