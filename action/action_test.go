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
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/state"
)

// fakeBackend records calls; it implements every capability.
type fakeBackend struct {
	mu      sync.Mutex
	calls   []string
	block   chan struct{} // when set, Teardown waits on it or ctx
	step    string        // when set, Teardown reports it as a progress step
	fanOut  int           // when set, Teardown reports a step from each of this many goroutines
	failErr error
	snaps   []backends.SnapshotInfo // what Snapshots lists (oldest first)
}

func (f *fakeBackend) Name() string        { return "docker:test" }
func (f *fakeBackend) Kind() backends.Kind { return backends.KindDocker }
func (f *fakeBackend) Watch(ctx context.Context, emit func(backends.Event)) error {
	<-ctx.Done()
	return nil
}
func (f *fakeBackend) record(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }
func (f *fakeBackend) Snapshots(_ context.Context, id string) ([]backends.SnapshotInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]backends.SnapshotInfo(nil), f.snaps...), nil
}
func (f *fakeBackend) DeleteSnapshot(_ context.Context, id, snap string) error {
	f.record("delete " + id + "@" + snap)
	return nil
}
func (f *fakeBackend) Snapshot(_ context.Context, id string, o backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	f.record("snapshot " + id)
	return backends.SnapshotInfo{ID: "s1", SandboxID: id}, f.failErr
}
func (f *fakeBackend) Revert(_ context.Context, id, snap string, o backends.RevertOptions) error {
	f.record("revert " + id + "@" + snap)
	return f.failErr
}
func (f *fakeBackend) Teardown(ctx context.Context, id string, o backends.TeardownOptions) error {
	f.record("teardown " + id)
	if f.step != "" {
		backends.Progress(ctx, "%s", f.step)
	}
	var wg sync.WaitGroup
	for i := range f.fanOut { // as the Docker backend snapshots members in parallel
		wg.Go(func() { backends.Progress(ctx, "member %d done", i) })
	}
	wg.Wait()
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

func (r fakeResolver) Fleet() []backends.Sandbox {
	out := make([]backends.Sandbox, 0, len(r.fleet))
	for _, sb := range r.fleet {
		out = append(out, sb)
	}
	return out
}

func (f *fakeBackend) CopyTo(context.Context, string, string, string, []byte, int64) error {
	return nil
}
func (f *fakeBackend) CopyFrom(context.Context, string, string, string) ([]byte, error) {
	return nil, nil
}

const (
	sbID    = "docker:test/inspect-x-iabcdef"
	plainID = "docker:test/container:plain"
)

var (
	local = Identity{Operator: "op@host", Transport: TransportStandalone}
	bob   = Identity{Operator: "bob", Transport: TransportSSH, Fingerprint: "SHA256:bob", Source: "192.0.2.7:51000"}
)

func setup(t *testing.T, readOnly bool) (*Layer, *fakeBackend, *state.DB) {
	t.Helper()
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fb := &fakeBackend{}
	fb.snaps = []backends.SnapshotInfo{{ID: "s1", SandboxID: sbID, Name: "before", Created: time.Unix(100, 0)}}
	r := fakeResolver{b: fb, fleet: map[string]backends.Sandbox{
		sbID:    {ID: sbID, Name: "inspect-x-iabcdef", Actionable: true},
		plainID: {ID: plainID, Name: "plain", Actionable: false},
	}}
	return New(r, db, Options{ReadOnly: readOnly, Identity: local, LockDir: t.TempDir()}), fb, db
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
	sb := Request{SandboxID: sbID, Confirmed: true}
	_, checks["snapshot"] = l.Snapshot(ctx, sb, backends.SnapshotOptions{})
	_, checks["revert"] = l.Revert(ctx, sb, "s1", backends.RevertOptions{})
	checks["teardown"] = l.Teardown(ctx, sb, backends.TeardownOptions{})
	_, checks["delete snapshot"] = l.DeleteSnapshot(ctx, sb, "s1")
	_, checks["exec"] = l.Exec(ctx, sb, backends.ExecRequest{Cmd: []string{"id"}})
	_, checks["probe"] = l.Probe(ctx, sb, probe.Request{})
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
	unconfirmed := Request{SandboxID: sbID}
	err := l.Teardown(context.Background(), unconfirmed, backends.TeardownOptions{})
	if !errors.Is(err, ErrNotConfirmed) || len(fb.calls) != 0 {
		t.Fatalf("unconfirmed teardown = %v, calls %v", err, fb.calls)
	}
	if _, err := l.Revert(context.Background(), unconfirmed, "s1", backends.RevertOptions{}); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("unconfirmed revert = %v", err)
	}
	if _, err := l.DeleteSnapshot(context.Background(), unconfirmed, "s1"); !errors.Is(err, ErrNotConfirmed) || len(fb.calls) != 0 {
		t.Fatalf("unconfirmed snapshot deletion = %v, calls %v", err, fb.calls)
	}
	// Snapshot is not destructive: no confirmation needed.
	if _, err := l.Snapshot(context.Background(), unconfirmed, backends.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestActsOnlyOnIdentifiedSandboxes(t *testing.T) {
	l, fb, _ := setup(t, false)
	plain := Request{SandboxID: plainID, Confirmed: true}
	if err := l.Teardown(context.Background(), plain, backends.TeardownOptions{}); !errors.Is(err, backends.ErrNotSandbox) {
		t.Fatalf("teardown of a plain container = %v; want ErrNotSandbox", err)
	}
	if _, err := l.Snapshot(context.Background(), plain, backends.SnapshotOptions{}); !errors.Is(err, backends.ErrNotSandbox) {
		t.Fatalf("snapshot of a plain container = %v; want ErrNotSandbox", err)
	}
	if err := l.Teardown(context.Background(), Request{SandboxID: "docker:test/unknown", Confirmed: true}, backends.TeardownOptions{}); !errors.Is(err, backends.ErrNotFound) {
		t.Fatalf("teardown of an unknown ID = %v; want ErrNotFound", err)
	}
	if len(fb.calls) != 0 {
		t.Fatalf("backend called: %v", fb.calls)
	}
	// --force lets teardown act on a non-sandbox, deliberately.
	if err := l.Teardown(context.Background(), plain, backends.TeardownOptions{Force: true}); err != nil {
		t.Fatalf("forced teardown = %v", err)
	}
}

func TestOneActionPerSandboxAndCancellationIsJournaled(t *testing.T) {
	l, fb, db := setup(t, false)
	fb.block = make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- l.Teardown(context.Background(), Request{SandboxID: sbID, Confirmed: true}, backends.TeardownOptions{})
	}()
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
	_, err := l.Snapshot(context.Background(), Request{SandboxID: sbID, Identity: bob}, backends.SnapshotOptions{})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "teardown") || !strings.Contains(err.Error(), "by "+local.Operator) {
		t.Fatalf("second action while busy = %v; want ErrBusy naming the running action and who runs it", err)
	}
	if tasks := l.Tasks(); len(tasks) != 1 || tasks[0].Status != TaskRunning || tasks[0].By != local {
		t.Fatalf("tasks = %+v", tasks)
	}
	if ok, err := l.Cancel(Identity{}, sbID); !ok || err != nil {
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
	if _, err := l.Revert(context.Background(), Request{SandboxID: sbID, Confirmed: true}, "s1", backends.RevertOptions{}); err == nil {
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

func TestManyIsBoundedAndReportsEach(t *testing.T) {
	l, fb, _ := setup(t, false)
	var reqs []Request
	for _, id := range []string{sbID, plainID, "docker:test/nope"} {
		reqs = append(reqs, Request{SandboxID: id, Confirmed: true})
	}
	errs := l.Many(context.Background(), reqs, 2, func(ctx context.Context, req Request) error {
		return l.Teardown(ctx, req, backends.TeardownOptions{})
	})
	if errs[0] != nil || !errors.Is(errs[1], backends.ErrNotSandbox) || !errors.Is(errs[2], backends.ErrNotFound) {
		t.Fatalf("errs = %v", errs)
	}
	if len(fb.calls) != 1 {
		t.Fatalf("calls = %v", fb.calls)
	}
}

// A step the backend reports while it works reaches the running task (task panel) and the
// caller's own reporter (the CLI prints it).
func TestProgressStepsReachTheTaskAndTheCaller(t *testing.T) {
	l, fb, _ := setup(t, false)
	fb.block = make(chan struct{})
	fb.step = "waiting for service discovery: b"
	var got []string
	ctx := backends.WithProgress(context.Background(), func(s string) { got = append(got, s) })
	done := make(chan error, 1)
	go func() {
		done <- l.Teardown(ctx, Request{SandboxID: sbID, Confirmed: true}, backends.TeardownOptions{})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if ts := l.Tasks(); len(ts) == 1 && ts[0].Step == fb.step {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks = %+v; want the reported step on the running task", l.Tasks())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(fb.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != fb.step {
		t.Fatalf("caller's reporter got %q", got)
	}
}
