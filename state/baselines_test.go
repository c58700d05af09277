package state

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Baselines are written a chunk to a transaction: every one of a write larger than a chunk,
// handed over in any order, is stored whole, and a later write replaces exactly its own.
func TestPutBaselinesAcrossTransactions(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 2*baselinesPerTx + 345
	bs := make([]Baseline, n)
	for i := range bs {
		bs[i] = Baseline{SandboxID: fmt.Sprintf("k8s:test/ns/rel%05d", i), Reason: "first seen", Recorded: time.Unix(int64(i), 0).UTC(),
			Findings: []sandbox.Finding{{RuleID: "K8S-H01", Severity: catalog.SeverityHigh, Member: fmt.Sprintf("pod%05d", i), Message: "m"}}}
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(n, func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	if err := db.PutBaselines(bs); err != nil {
		t.Fatal(err)
	}
	again := make([]Baseline, baselinesPerTx+1)
	for i := range again {
		again[i] = bs[i]
		again[i].Reason = "probe"
	}
	if err := db.PutBaselines(again); err != nil {
		t.Fatal(err)
	}
	got, err := db.Baselines()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d baselines stored, want %d", len(got), n)
	}
	want := map[string]Baseline{}
	for i, b := range bs {
		if i < len(again) {
			b = again[i]
		}
		want[b.SandboxID] = b
	}
	for _, b := range got {
		w, ok := want[b.SandboxID]
		if !ok || b.Reason != w.Reason || !b.Recorded.Equal(w.Recorded) || len(b.Findings) != 1 || b.Findings[0].Member != w.Findings[0].Member {
			t.Fatalf("stored %+v, want %+v", b, w)
		}
		delete(want, b.SandboxID)
	}
}
