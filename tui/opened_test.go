package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// A cache read with its findings left encoded (what the workbench reads at a start) paints each
// row's worst severity, and the detail of a cached row lists its findings.
func TestOutlinedCacheRowsShowTheirFindingsInTheDetail(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sb := backends.Sandbox{ID: "k8s:x/inspect/agent-env-a", Name: "agent-env-a", Backend: backends.KindKubernetes, Endpoint: "k8s:x",
		Status: backends.StatusRunning, Task: "ctf_web", Inspect: true, Created: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC),
		Findings: []backends.Finding{
			{RuleID: "K8S-H01", Severity: catalog.SeverityCritical, Axis: catalog.AxisHost, Member: "agent-env-a-default-0", Message: "privileged container"},
			{RuleID: "K8S-N01", Severity: catalog.SeverityHigh, Axis: catalog.AxisNetwork, Member: "agent-env-a-default-0", Message: "no network policy"},
		}}
	if err := db.SaveInventory(state.InventoryRecord{Backend: "k8s:x", Sandboxes: []backends.Sandbox{sb}}); err != nil {
		t.Fatal(err)
	}
	m := New(Options{NoColor: true, Now: func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) },
		Open: func() (Opened, error) {
			recs, err := db.InventoryOutlines()
			if err != nil || len(recs) != 1 || !recs[0].Outlined() {
				t.Errorf("InventoryOutlines = %d records (outlined: %v), %v", len(recs), len(recs) == 1 && recs[0].Outlined(), err)
			}
			return Opened{State: db, Inventory: recs}, nil
		}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	m.Update(m.open()())
	row, ok := m.Fleet().Store().Get(sb.ID)
	if !ok || !row.Stale || row.Sev != catalog.SeverityCritical || row.SB.Findings != nil {
		t.Fatalf("cached row %v: stale %v, severity %v, findings held %d", ok, ok && row.Stale, row.Sev, len(row.SB.Findings))
	}
	if v := m.render(); !strings.Contains(v, "1/1 sandboxes") || !strings.Contains(v, "critical") {
		t.Fatalf("the table does not show the cached row's severity:\n%s", v)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if v := m.render(); !strings.Contains(v, "POSTURE (2 findings, worst critical)") || !strings.Contains(v, "no network policy") {
		t.Fatalf("the cached row's detail does not list its findings:\n%s", v)
	}
}
