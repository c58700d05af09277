package action

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/hostlock"
	"github.com/rangekeeper/rangekeeper/state"
)

func (f *fakeBackend) Recover(_ context.Context, rec backends.PendingAction) (string, error) {
	f.record("recover " + rec.SandboxID + " " + rec.Action)
	return "completed", nil
}

func (r fakeResolver) Backends() []backends.Backend { return []backends.Backend{r.b} }

func TestWriteAheadRecordLivesForTheActionAndLinksTheIntent(t *testing.T) {
	l, fb, db := setup(t, false)
	fb.block, fb.step = make(chan struct{}), "removed members"
	done := make(chan error, 1)
	go func() {
		done <- l.Teardown(context.Background(), Request{SandboxID: sbID, Confirmed: true}, backends.TeardownOptions{})
	}()
	var recs []state.Pending
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if recs, _ = db.PendingActions(sbID); len(recs) == 1 && len(recs[0].Steps) == 1 {
			break
		}
	}
	es := journal(t, db)
	if len(recs) != 1 || recs[0].ID != es[0].Seq || recs[0].Action != "teardown" || recs[0].Steps[0] != "removed members" {
		t.Fatalf("while running: records %+v, intent %+v", recs, es)
	}
	close(fb.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if recs, _ := db.PendingActions(""); len(recs) != 0 {
		t.Fatalf("after success the record stays: %+v", recs)
	}
}

// A backend may report steps from parallel work; the record takes them one at a time (the race
// detector checks it) and the caller sees every one.
func TestStepsFromParallelWorkAreAllRecorded(t *testing.T) {
	l, fb, _ := setup(t, false)
	fb.fanOut = 16
	var mu sync.Mutex
	seen := map[string]bool{}
	ctx := backends.WithProgress(context.Background(), func(s string) { mu.Lock(); seen[s] = true; mu.Unlock() })
	if err := l.Teardown(ctx, Request{SandboxID: sbID, Confirmed: true}, backends.TeardownOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range fb.fanOut {
		if s := fmt.Sprintf("member %d done", i); !seen[s] {
			t.Errorf("step %q never reached the caller (saw %v)", s, seen)
		}
	}
}

func TestInterruptedActionIsFinishedBeforeTheNextOne(t *testing.T) {
	l, fb, db := setup(t, false)
	if err := db.PutPending(state.Pending{ID: 41, Action: "revert", SandboxID: sbID, Backend: "docker:test", PID: 1, Steps: []string{"removed"}}); err != nil {
		t.Fatal(err)
	}
	in, err := l.Interrupted()
	if err != nil || len(in) != 1 || in[0].ID != 41 {
		t.Fatalf("Interrupted = %+v, %v", in, err)
	}
	if _, err := l.Snapshot(context.Background(), Request{SandboxID: sbID}, backends.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"recover " + sbID + " revert", "snapshot " + sbID}; !slices.Equal(fb.calls, want) {
		t.Fatalf("calls = %q, want %q", fb.calls, want)
	}
	var recover []state.Entry
	for _, e := range journal(t, db) {
		if e.Action == "recover" {
			recover = append(recover, e)
		}
	}
	if len(recover) != 2 || recover[0].Params["record"] != "41" || recover[0].Params["of"] != "revert" || recover[1].Outcome != state.OutcomeOK {
		t.Fatalf("recover journal = %+v", recover)
	}
	if recs, _ := db.PendingActions(""); len(recs) != 0 {
		t.Fatalf("records left: %+v", recs)
	}
}

func TestHalfDoneFailureKeepsItsRecordUntilRecovered(t *testing.T) {
	l, fb, _ := setup(t, false)
	fb.failErr = fmt.Errorf("revert stopped after removing members: %w", backends.ErrInterrupted)
	if _, err := l.Revert(context.Background(), Request{SandboxID: sbID, Confirmed: true}, "s1", backends.RevertOptions{}); err == nil {
		t.Fatal("revert succeeded")
	}
	in, _ := l.Interrupted()
	if len(in) != 1 || in[0].Action != "revert" || !strings.Contains(in[0].Failed, "removing members") {
		t.Fatalf("Interrupted = %+v", in)
	}
	fb.failErr = nil
	did, err := l.Recover(context.Background(), Request{SandboxID: sbID}, 0)
	if err != nil || len(did) != 1 || !strings.Contains(did[0], "completed") {
		t.Fatalf("Recover = %q, %v", did, err)
	}
	if in, _ := l.Interrupted(); len(in) != 0 {
		t.Fatalf("still interrupted: %+v", in)
	}
}

func TestRecoverFindsASandboxGoneFromTheFleet(t *testing.T) {
	l, fb, db := setup(t, false)
	gone := "docker:test/inspect-gone"
	if err := db.PutPending(state.Pending{ID: 7, Action: "revert", SandboxID: gone, Backend: "docker:test", PID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Revert(context.Background(), Request{SandboxID: gone, Confirmed: true}, "s1", backends.RevertOptions{}); !errors.Is(err, backends.ErrNotFound) {
		t.Fatalf("revert of a gone sandbox = %v", err)
	}
	did, err := l.Recover(context.Background(), Request{SandboxID: gone}, 7)
	if err != nil || !slices.Contains(fb.calls, "recover "+gone+" revert") {
		t.Fatalf("Recover = %q, %v; calls %q", did, err, fb.calls)
	}
}

func TestAnotherProcessOnTheSandboxIsRefused(t *testing.T) {
	l1, fb, _ := setup(t, false)
	db2, err := state.Open(filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	l2 := New(fakeResolver{b: fb, fleet: map[string]backends.Sandbox{sbID: {ID: sbID, Name: "x", Actionable: true}}}, db2,
		Options{Identity: bob, LockDir: l1.opts.LockDir})
	fb.block = make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- l1.Teardown(context.Background(), Request{SandboxID: sbID, Confirmed: true}, backends.TeardownOptions{})
	}()
	for !hostlock.Held(l1.opts.LockDir, sbID) {
		time.Sleep(5 * time.Millisecond)
	}
	_, err = l2.Snapshot(context.Background(), Request{SandboxID: sbID}, backends.SnapshotOptions{})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another rangekeeper process: teardown") || !strings.Contains(err.Error(), "op@host") {
		t.Fatalf("second process = %v", err)
	}
	close(fb.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestUnfinishedActionOfAnotherStateFileRefusesUntilRecoveredThere(t *testing.T) {
	l, _, db := setup(t, false)
	lock, _, err := hostlock.Acquire(l.opts.LockDir, hostlock.Holder{Sandbox: sbID, Action: "revert", PID: 99})
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.SetRecord("/elsewhere/state.db", 12); err != nil {
		t.Fatal(err)
	}
	lock.Release() // as kill -9 leaves it
	_, err = l.Snapshot(context.Background(), Request{SandboxID: sbID}, backends.SnapshotOptions{})
	if !errors.Is(err, ErrUnfinished) || !strings.Contains(err.Error(), "--state /elsewhere/state.db recover") {
		t.Fatalf("snapshot = %v", err)
	}
	_ = db
}
