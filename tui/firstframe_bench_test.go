package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/state"
)

// BenchmarkFirstFrameFromCache10k is the road from an open state file holding 10,000 cached
// Kubernetes-style sandboxes to the first frame that shows them: the cache decoded, installed
// through the program's Open result and rendered (issue 18: < 100 ms).
func BenchmarkFirstFrameFromCache10k(b *testing.B) {
	const n = 10_000
	db, err := state.Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sim := simfleet.New("sim", backends.KindKubernetes, n, 0)
	sbs := make([]backends.Sandbox, n)
	for i := range sbs {
		sbs[i] = sim.Sandbox(i, 0)
	}
	if err := db.SaveInventory(state.InventoryRecord{Backend: sim.Name(), Sandboxes: sbs}); err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	u0 := rusage()
	defer func() { b.ReportMetric(float64((rusage()-u0).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
	for b.Loop() {
		m := New(Options{NoColor: true, Now: func() time.Time { return now }})
		m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
		recs, err := db.Inventory()
		if err != nil {
			b.Fatal(err)
		}
		m.Update(openedMsg{o: Opened{State: db, Inventory: recs}})
		if v := m.render(); !strings.Contains(v, "10000/10000 sandboxes") {
			b.Fatalf("first frame does not show the cache:\n%s", v)
		}
	}
}
