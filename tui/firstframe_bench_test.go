package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// BenchmarkFirstFrameFromCache10k is the road from an open state file holding 10,000 cached
// Kubernetes-style sandboxes (34 findings each, as a two-service release has) to the first
// frame that shows them: the cache read as the workbench reads it (findings left encoded), its
// rows prepared as the Open command prepares them, installed and rendered (< 100 ms;
// cli's BenchmarkFirstFrameFromCache10k times the whole process).
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
		for j := range 34 {
			sbs[i].Findings = append(sbs[i].Findings, backends.Finding{RuleID: fmt.Sprintf("K8S-H%02d", j%17), Severity: catalog.SeverityMedium,
				Axis: catalog.AxisHost, Member: sbs[i].Name + "-default-0", Message: "a hardening setting is missing"})
		}
	}
	if err := db.SaveInventory(state.InventoryRecord{Backend: sim.Name(), Sandboxes: sbs}); err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	// "full" decodes the findings too (the road before the workbench read outlines).
	for _, c := range []struct {
		name string
		read func() ([]state.InventoryRecord, error)
	}{{"full", db.Inventory}, {"outlines", db.InventoryOutlines}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			u0 := rusage()
			defer func() { b.ReportMetric(float64((rusage()-u0).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
			for b.Loop() {
				m := New(Options{NoColor: true, Now: func() time.Time { return now }})
				m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
				recs, err := c.read()
				if err != nil {
					b.Fatal(err)
				}
				m.Update(openedMsg{o: Opened{State: db, Inventory: recs}, cache: prepareCache(recs, m.fleet.Store().Order())})
				if v := m.render(); !strings.Contains(v, "10000/10000 sandboxes") {
					b.Fatalf("first frame does not show the cache:\n%s", v)
				}
			}
		})
	}
}
