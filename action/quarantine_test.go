package action

import (
	"context"
	"errors"
	"testing"

	"github.com/rangekeeper/rangekeeper/state"
)

func (f *fakeBackend) Quarantine(_ context.Context, id string, save func([]byte) error) error {
	if err := save([]byte(`{"endpoints":["x"]}`)); err != nil {
		return err
	}
	f.record("quarantine " + id)
	return f.failErr
}

func (f *fakeBackend) Release(_ context.Context, id string, plan []byte) error {
	f.record("release " + id + " " + string(plan))
	return f.failErr
}

// Quarantine and release go through the layer: refused read-only and unconfirmed (the backend
// never called), the plan kept in the state file with the operator until
// release hands it back, a second quarantine refused, and a failed release keeps the record.
func TestQuarantineReleaseThroughTheLayer(t *testing.T) {
	ro, rfb, _ := setup(t, true)
	if err := ro.Quarantine(context.Background(), Request{SandboxID: sbID, Confirmed: true}); !errors.Is(err, ErrReadOnly) || len(rfb.calls) != 0 {
		t.Fatalf("read-only quarantine: %v, calls %v", err, rfb.calls)
	}
	l, fb, db := setup(t, false)
	ctx := context.Background()
	if err := l.Quarantine(ctx, Request{SandboxID: sbID}); !errors.Is(err, ErrNotConfirmed) || len(fb.calls) != 0 {
		t.Fatalf("unconfirmed quarantine: %v, calls %v", err, fb.calls)
	}
	if err := l.Quarantine(ctx, Request{SandboxID: sbID, Confirmed: true, Identity: bob}); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := db.Quarantine(sbID)
	if err != nil || !ok || rec.Operator != "bob" || string(rec.Plan) != `{"endpoints":["x"]}` || rec.Backend != "docker:test" {
		t.Fatalf("record %+v ok=%v err=%v", rec, ok, err)
	}
	if err := l.Quarantine(ctx, Request{SandboxID: sbID, Confirmed: true}); !errors.Is(err, ErrQuarantine) {
		t.Errorf("second quarantine: %v, want refused", err)
	}
	fb.failErr = errors.New("engine: network gone")
	if err := l.Release(ctx, Request{SandboxID: sbID, Confirmed: true}); err == nil {
		t.Fatal("failed release reported success")
	}
	if _, ok, _ := db.Quarantine(sbID); !ok {
		t.Fatal("a failed release dropped the record")
	}
	fb.failErr = nil
	if err := l.Release(ctx, Request{SandboxID: sbID, Confirmed: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Quarantine(sbID); ok {
		t.Error("record kept after release")
	}
	if err := l.Release(ctx, Request{SandboxID: sbID, Confirmed: true}); !errors.Is(err, ErrQuarantine) {
		t.Errorf("release of a sandbox not quarantined: %v", err)
	}
	// Unconfirmed is refused before the layer acts; quarantined-already and not-quarantined are
	// found by reading the record under the sandbox's lock, so they end as failed, with the reason.
	want := map[string]int{state.OutcomeRefused: 1, state.OutcomeOK: 2, state.OutcomeFailed: 3}
	got := map[string]int{}
	for _, e := range journal(t, db) {
		if e.Phase == state.PhaseOutcome {
			got[e.Outcome]++
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("journal outcomes %v, want %v", got, want)
			break
		}
	}
	if len(fb.calls) != 3 || fb.calls[2] != `release `+sbID+` {"endpoints":["x"]}` {
		t.Errorf("backend calls %v", fb.calls)
	}
}
