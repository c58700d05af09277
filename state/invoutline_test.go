package state

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// outlineAgrees checks an outlined decode of raw against the full one: the same sandboxes
// without findings, and the findings, worst severity and count of each read on demand.
func outlineAgrees(t *testing.T, raw []byte) {
	t.Helper()
	full, ferr := decodeInventory(raw)
	out, oerr := decodeInventoryOutline(raw)
	if (ferr == nil) != (oerr == nil) {
		t.Fatalf("full decode error %v, outlined %v", ferr, oerr)
	}
	if ferr != nil {
		return
	}
	if len(full.Sandboxes) > 0 && !out.Outlined() || len(out.Sandboxes) != len(full.Sandboxes) {
		t.Fatalf("outlined %v with %d sandboxes, want %d", out.Outlined(), len(out.Sandboxes), len(full.Sandboxes))
	}
	for i := range full.Sandboxes {
		if got, want := out.FindingsOf(i), full.Sandboxes[i].Findings; len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("sandbox %d: findings on demand %+v, want %+v", i, got, want)
		}
		if got, want := out.WorstOf(i), full.Sandboxes[i].WorstSeverity(); got != want {
			t.Fatalf("sandbox %d: worst %v, want %v", i, got, want)
		}
		if got, want := out.FindingCountOf(i), len(full.Sandboxes[i].Findings); got != want {
			t.Fatalf("sandbox %d: %d findings counted, want %d", i, got, want)
		}
		sb, want := out.Sandboxes[i], full.Sandboxes[i]
		if sb.Findings != nil {
			t.Fatalf("sandbox %d of an outlined record holds its findings", i)
		}
		want.Findings = nil
		if !reflect.DeepEqual(sb, want) {
			t.Fatalf("sandbox %d differs beyond its findings:\n got %+v\nwant %+v", i, sb, want)
		}
	}
}

func TestInventoryOutlinesReadFindingsOnDemand(t *testing.T) {
	fleet := k8sFleet(5)
	fleet[2].Findings = nil
	fleet[3].Findings = []sandbox.Finding{}
	outlineAgrees(t, encodeInventory(InventoryRecord{Backend: "k8s:x", Sandboxes: fleet}))
	outlineAgrees(t, encodeInventory(InventoryRecord{Backend: "docker:empty"}))

	// Through the state file: the record outlives its transaction (it is copied out).
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	if err := db.SaveInventory(InventoryRecord{Backend: "k8s:x", Sandboxes: fleet}); err != nil {
		t.Fatal(err)
	}
	recs, err := db.InventoryOutlines()
	if err != nil || len(recs) != 1 {
		t.Fatalf("InventoryOutlines = %d records, %v", len(recs), err)
	}
	if err := db.SaveInventory(InventoryRecord{Backend: "k8s:x", Sandboxes: k8sFleet(1)}); err != nil {
		t.Fatal(err)
	}
	if got := recs[0].FindingsOf(4); !reflect.DeepEqual(got, fleet[4].Findings) {
		t.Fatalf("findings read after the record was rewritten: %+v, want %+v", got, fleet[4].Findings)
	}
}

func TestInventoryOutlineOfACorruptRecordIsAnError(t *testing.T) {
	raw := encodeInventory(InventoryRecord{Backend: "k8s:x", Sandboxes: k8sFleet(2)})
	for cut := len(invMagic); cut < len(raw); cut += 5 {
		if _, err := decodeInventoryOutline(raw[:cut]); err == nil {
			t.Fatalf("a record cut at byte %d of %d decoded without error", cut, len(raw))
		}
	}
}
