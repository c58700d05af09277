package action

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// fakeBackend records calls; it implements every capability.
type fakeBackend struct {
	mu      sync.Mutex
	calls   []string
	block   chan struct{} // when set, Teardown waits on it or ctx
	failErr error
}

func (f *fakeBackend) Name() string        { return "docker:test" }
func (f *fakeBackend) Kind() backends.Kind { return backends.KindDocker }
func (f *fakeBackend) Watch(ctx context.Context, emit func(backends.Event)) error {
	<-ctx.Done()
	return nil
}
func (f *fakeBackend) record(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }
func (f *fakeBackend) Snapshots(context.Context, string) ([]backends.SnapshotInfo, error) {
	return nil, nil
}
func (f *fakeBackend) DeleteSnapshot(_ context.Context, id, snap string) error {
	f.record("delete " + id)
	return nil
}
func (f *fakeBackend) Snapshot(_ context.Context, id string, o backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	f.record("snapshot " + id)
	return backends.SnapshotInfo{ID: "s1", SandboxID: id}, f.failErr
}
func (f *fakeBackend) Revert(_ context.Context, id, snap string, o backends.RevertOptions) error {
	f.record("revert " + id)
	return f.failErr
}
func (f *fakeBackend) Teardown(ctx context.Context, id string, o backends.TeardownOptions) error {
	f.record("teardown " + id)
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return f.failErr
}
func (f *fakeBackend) Exec(_ context.Context, id string, r backends.ExecRequest) (backends.ExecResult, error) {
	f.record("exec " + id)
	return backends.ExecResult{}, nil
}

type fakeResolver struct {
	b     backends.Backend
	fleet map[string]backends.Sandbox
}

func (r fakeResolver) Lookup(id string) (backends.Backend, backends.Sandbox, bool) {
	sb, ok := r.fleet[id]
	return r.b, sb, ok
}

const (
	sbID    = "docker:test/inspect-x-iabcdef"
	plainID = "docker:test/container:plain"
)

func setup(t *testing.T, readOnly bool) (*Layer, *fakeBackend, *state.DB) {
	t.Helper()
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fb := &fakeBackend{}
	r := fakeResolver{b: fb, fleet: map[string]backends.Sandbox{
		sbID:    {ID: sbID, Name: "inspect-x-iabcdef", Actionable: true},
		plainID: {ID: plainID, Name: "plain", Actionable: false},
	}}
	return New(r, db, readOnly), fb, db
}

func journal(t *testing.T, db *state.DB) []state.Entry {
	t.Helper()
	es, err := db.Journal(state.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestReadOnlyRefusesEveryMutatingActionAtTheActionLayer(t *testing.T) {
	l, fb, db := setup(t, true)
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["snapshot"] = l.Snapshot(ctx, sbID, backends.SnapshotOptions{})
	checks["revert"] = l.Revert(ctx, sbID, "s1", backends.RevertOptions{}, true)
	checks["teardown"] = l.Teardown(ctx, sbID, backends.TeardownOptions{}, true)
	checks["delete snapshot"] = l.DeleteSnapshot(ctx, sbID, "s1")
	_, checks["exec"] = l.Exec(ctx, sbID, backends.ExecRequest{Cmd: []string{"id"}})
	for name, err := range checks {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s in read-only mode = %v; want ErrReadOnly", name, err)
		}
	}
	if len(fb.calls) != 0 {
		t.Fatalf("backend was called in read-only mode: %v", fb.calls)
	}
	es := journal(t, db)
	if len(es) != 2*len(checks) {
		t.Fatalf("journal has %d entries; want intent+refused outcome for each of %d attempts", len(es), len(checks))
	}
	for _, e := range es {
		if e.Phase == state.PhaseOutcome && e.Outcome != state.OutcomeRefused {
			t.Errorf("outcome %+v; want refused", e)
		}
	}
}

func TestDestructiveActionsNeedConfirmation(t *testing.T) {
	l, fb, _ := setup(t, false)
	err := l.Teardown(context.Background(), sbID, backends.TeardownOptions{}, false)
	if !errors.Is(err, ErrNotConfirmed) || len(fb.calls) != 0 {
		t.Fatalf("unconfirmed teardown = %v, calls %v", err, fb.calls)
	}
	if err := l.Revert(context.Background(), sbID, "s1", backends.RevertOptions{}, false); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("unconfirmed revert = %v", err)
	}
	// Snapshot is not destructive: no confirmation needed.
	if _, err := l.Snapshot(context.Background(), sbID, backends.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestActsOnlyOnIdentifiedSandboxes(t *testing.T) {
	l, fb, _ := setup(t, false)
	if err := l.Teardown(context.Background(), plainID, backends.TeardownOptions{}, true); !errors.Is(err, backends.ErrNotSandbox) {
		t.Fatalf("teardown of a plain container = %v; want ErrNotSandbox", err)
	}
	if _, err := l.Snapshot(context.Background(), plainID, backends.SnapshotOptions{}); !errors.Is(err, backends.ErrNotSandbox) {
		t.Fatalf("snapshot of a plain container = %v; want ErrNotSandbox", err)
	}
	if err := l.Teardown(context.Background(), "docker:test/unknown", backends.TeardownOptions{}, true); !errors.Is(err, backends.ErrNotFound) {
		t.Fatalf("teardown of an unknown ID = %v; want ErrNotFound", err)
	}
	if len(fb.calls) != 0 {
		t.Fatalf("backend called: %v", fb.calls)
	}
	// --force lets teardown act on a non-sandbox, deliberately.
	if err := l.Teardown(context.Background(), plainID, backends.TeardownOptions{Force: true}, true); err != nil {
		t.Fatalf("forced teardown = %v", err)
	}
}

func TestOneActionPerSandboxAndCancellationIsJournaled(t *testing.T) {
	l, fb, db := setup(t, false)
	fb.block = make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- l.Teardown(context.Background(), sbID, backends.TeardownOptions{}, true) }()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, busy := l.Busy(sbID); busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("teardown never started")
		}
		time.Sleep(time.Millisecond)
	}
	_, err := l.Snapshot(context.Background(), sbID, backends.SnapshotOptions{})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "teardown") {
		t.Fatalf("second action while busy = %v; want ErrBusy naming the running action", err)
	}
	if tasks := l.Tasks(); len(tasks) != 1 || tasks[0].Status != TaskRunning {
		t.Fatalf("tasks = %+v", tasks)
	}
	if !l.Cancel(sbID) {
		t.Fatal("Cancel found nothing to cancel")
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled teardown = %v", err)
	}
	es := journal(t, db)
	last := es[len(es)-1]
	if last.Action != "teardown" || last.Outcome != state.OutcomeCancelled || last.Intent == 0 {
		t.Fatalf("last journal entry = %+v; want the teardown's cancelled outcome linked to its intent", last)
	}
	if _, busy := l.Busy(sbID); busy {
		t.Error("lock not released after cancellation")
	}
}

func TestFailureIsJournaledWithTheError(t *testing.T) {
	l, fb, db := setup(t, false)
	fb.failErr = errors.New("engine said no")
	if err := l.Revert(context.Background(), sbID, "s1", backends.RevertOptions{}, true); err == nil {
		t.Fatal("want the backend's error")
	}
	es := journal(t, db)
	if len(es) != 2 || es[0].Phase != state.PhaseIntent || es[1].Outcome != state.OutcomeFailed || es[1].Error != "engine said no" {
		t.Fatalf("journal = %+v", es)
	}
	if es[0].Params["snapshot"] != "s1" {
		t.Errorf("intent params = %v", es[0].Params)
	}
}

func TestTeardownManyIsBoundedAndReportsEach(t *testing.T) {
	l, fb, _ := setup(t, false)
	errs := l.TeardownMany(context.Background(), []string{sbID, plainID, "docker:test/nope"}, backends.TeardownOptions{}, true, 2)
	if errs[0] != nil || !errors.Is(errs[1], backends.ErrNotSandbox) || !errors.Is(errs[2], backends.ErrNotFound) {
		t.Fatalf("errs = %v", errs)
	}
	if len(fb.calls) != 1 {
		t.Fatalf("calls = %v", fb.calls)
	}
}
