package verify_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
)

// TestStateRecorder: a run is journaled as intent and outcome, both with the whole identity of
// who ran it, and its result lands in the probe history under the spec's key, from where it
// reads back whole.
func TestStateRecorder(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	who := action.Identity{Operator: "alice", Transport: action.TransportSSH, Fingerprint: "SHA256:alice", Source: "192.0.2.7:51000"}
	rec := &verify.StateRecorder{DB: db, Who: who}
	d := &fakeDriver{plan: twoServices}
	res := verify.Run(context.Background(), verify.Options{Spec: "testdata/spec.yaml", Expect: "N2"},
		verify.Deps{Driver: d, Prober: fakeProber(t, map[string]bool{"default 198.51.100.1:100": true}, nil), Recorder: rec})
	es, err := db.Journal(state.JournalQuery{Target: verify.HistoryKey("testdata/spec.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Phase != state.PhaseIntent || es[1].Phase != state.PhaseOutcome || es[1].Intent != es[0].Seq {
		t.Fatalf("journal %+v", es)
	}
	for _, e := range es {
		if got := (action.Identity{Operator: e.Operator, Transport: e.Transport, Fingerprint: e.Fingerprint, Source: e.Source}); got != who {
			t.Errorf("%s entry carries %+v; want %+v", e.Phase, got, who)
		}
	}
	if es[1].Outcome != state.OutcomeOK || es[1].Params["outcome"] != "weaker" || es[1].Params["run"] != res.RunID || es[1].Error != res.Reason {
		t.Errorf("outcome entry %+v", es[1])
	}
	hist, err := verify.History(db, "testdata/spec.yaml", 0)
	if err != nil || len(hist) != 1 {
		t.Fatalf("history %d, %v", len(hist), err)
	}
	h := hist[0]
	if h.RunID != res.RunID || h.Exit != verify.ExitWeaker || h.Measured != res.Measured || len(h.Checks) != len(res.Checks) {
		t.Errorf("history entry %+v", h)
	}
}
