package daemon_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/daemon/daemontest"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/operators"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/watch"
)

// actingFleet is the simulated fleet with snapshots: one named "slow" runs until its context
// ends (an action still running when the daemon stops), any other returns at once.
type actingFleet struct {
	*simfleet.Backend
	started chan string
}

func (actingFleet) Unsupported(backends.Action) string { return "" }

func (f actingFleet) Snapshot(ctx context.Context, id string, o backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	if o.Name == "slow" {
		f.started <- id
		<-ctx.Done()
		return backends.SnapshotInfo{}, ctx.Err()
	}
	return backends.SnapshotInfo{ID: "snap-" + o.Name, Name: o.Name}, nil
}

func (actingFleet) Snapshots(context.Context, string) ([]backends.SnapshotInfo, error) {
	return nil, nil
}

func (actingFleet) DeleteSnapshot(context.Context, string, string) error { return nil }

// teamRig is a daemon over a small acting fleet with an admin (alice), an operator (bob) and a
// viewer (vic), each identified as an SSH session would be.
type teamRig struct {
	d     *daemon.Daemon
	db    *state.DB
	fleet actingFleet
	ids   []string
	who   map[string]action.Identity
}

func newTeamRig(t *testing.T, opts ...func(*daemon.Options)) *teamRig {
	t.Helper()
	dir := t.TempDir()
	db := daemontest.State(t, dir)
	sim := simfleet.New("sim", backends.KindKubernetes, 4, 0)
	r := &teamRig{db: db, fleet: actingFleet{Backend: sim, started: make(chan string, 4)}, who: map[string]action.Identity{}}
	for i := range 4 {
		r.ids = append(r.ids, sim.Sandbox(i, 0).ID)
	}
	sup := daemontest.Supervisor(t, 10*time.Second, r.fleet)
	ops := "operators:\n"
	for i, e := range []struct{ name, role string }{{"alice", "admin"}, {"bob", "operator"}, {"vic", "viewer"}} {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		k, err := gossh.NewPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		ops += "  - name: " + e.name + "\n    role: " + e.role + "\n    keys: [\"" + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k))) + "\"]\n"
		r.who[e.name] = action.Identity{Operator: e.name, Transport: action.TransportSSH, Fingerprint: operators.Fingerprint(k), Source: "192.0.2.1:" + string(rune('1'+i)) + "2222"}
	}
	path := filepath.Join(dir, "operators.yaml")
	if err := os.WriteFile(path, []byte(ops), 0o600); err != nil {
		t.Fatal(err)
	}
	o := daemon.Options{Supervisor: sup, State: db, NewLayer: daemontest.Layer(sup, db), OperatorsPath: path, ActionRate: 100, ActionBurst: 100,
		Layer: action.Options{LockDir: filepath.Join(dir, "locks")}}
	for _, f := range opts {
		f(&o)
	}
	var err error
	r.d, err = daemon.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.d.Shutdown(context.Background()) })
	return r
}

// outcome is the journal's outcome entry for the action on target (the newest).
func (r *teamRig) outcome(t *testing.T, action, target string) state.Entry {
	t.Helper()
	js, err := r.db.Journal(state.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for i := len(js) - 1; i >= 0; i-- {
		if e := js[i]; e.Phase == state.PhaseOutcome && e.Action == action && e.Target == target {
			return e
		}
	}
	t.Fatalf("no outcome of %s %s in the journal: %+v", action, target, js)
	return state.Entry{}
}

// identified fails unless every field of who is on e.
func identified(t *testing.T, e state.Entry, who action.Identity) {
	t.Helper()
	if got := (action.Identity{Operator: e.Operator, Transport: e.Transport, Fingerprint: e.Fingerprint, Source: e.Source}); got != who {
		t.Errorf("journal entry %d (%s %s %s) carries %+v; want %+v", e.Seq, e.Action, e.Phase, e.Outcome, got, who)
	}
}

// TestShutdownStopsAcceptingBeforeItWaits: on SIGTERM the daemon first refuses new actions
// ("the daemon is stopping", journaled with who asked) and new sessions, while the running action
// goes on and the open sessions still see it; when the grace runs out the action is journaled
// interrupted, then the sessions end.
func TestShutdownStopsAcceptingBeforeItWaits(t *testing.T) {
	r := newTeamRig(t)
	bob, alice := r.who["bob"], r.who["alice"]
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Layer().Snapshot(r.d.Context(), action.Request{SandboxID: r.ids[0], Identity: bob}, backends.SnapshotOptions{Name: "slow"})
		done <- err
	}()
	select {
	case <-r.fleet.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow snapshot did not start")
	}
	var openEnded atomic.Int32
	r.d.Hub().Join(bob, operators.Operator, func() { openEnded.Add(1) })

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	stopped := make(chan struct{})
	go func() { r.d.Shutdown(ctx); close(stopped) }()
	for start := time.Now(); !r.d.Layer().Stopping(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("Shutdown did not stop accepting")
		}
	}

	// A new action is refused at once, and journaled with who asked.
	_, err := r.d.Layer().Snapshot(context.Background(), action.Request{SandboxID: r.ids[1], Identity: alice}, backends.SnapshotOptions{Name: "quick"})
	if !errors.Is(err, action.ErrStopping) || !strings.Contains(err.Error(), "the daemon is stopping") {
		t.Fatalf("snapshot during the stop = %v; want a refusal saying the daemon is stopping", err)
	}
	refused := r.outcome(t, string(backends.ActionSnapshot), r.ids[1])
	if refused.Outcome != state.OutcomeRefused || !strings.Contains(refused.Error, "the daemon is stopping") {
		t.Errorf("refusal journaled as %+v", refused)
	}
	identified(t, refused, alice)

	// A session that joins now is ended at once; the open one is not, and still sees the action.
	var lateEnded atomic.Int32
	r.d.Hub().Join(alice, operators.Admin, func() { lateEnded.Add(1) })
	for start := time.Now(); lateEnded.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 2*time.Second {
			t.Fatal("a session joining a stopping daemon was not ended")
		}
	}
	if openEnded.Load() != 0 {
		t.Fatal("an open session was ended before the grace ran out")
	}
	if r.d.Running() != 1 {
		t.Fatalf("%d actions running during the grace; want the slow snapshot", r.d.Running())
	}
	if a, who, busy := r.d.Layer().BusyBy(r.ids[0]); !busy || a != backends.ActionSnapshot || who != bob {
		t.Errorf("BusyBy during the grace = %s %+v %v; want bob's snapshot", a, who, busy)
	}

	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	if err := <-done; !errors.Is(err, action.ErrStopped) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("the running snapshot ended with %v; want it interrupted by the stop", err)
	}
	out := r.outcome(t, string(backends.ActionSnapshot), r.ids[0])
	if out.Outcome != state.OutcomeInterrupted || !strings.Contains(out.Error, "the daemon stopped") {
		t.Errorf("the cut-short snapshot journaled as %+v; want outcome interrupted", out)
	}
	identified(t, out, bob)
	if ts := r.d.Layer().Tasks(); len(ts) == 0 || ts[0].Status != action.TaskStatus(state.OutcomeInterrupted) {
		t.Errorf("tasks after the stop: %+v; want the snapshot's status interrupted", ts)
	}
	if openEnded.Load() != 1 {
		t.Errorf("the open session was ended %d times; want once, after the grace", openEnded.Load())
	}
	// The backend ended cleanly on the cancellation: no write-ahead record is left to recover.
	if recs, err := r.d.Layer().Interrupted(); err != nil || len(recs) != 0 {
		t.Errorf("Interrupted after a clean stop = %+v, %v; want none", recs, err)
	}
}

// TestBulkNeedsAdminAtTheLayer: acting on many sandboxes at once is refused to a non-admin by
// the action layer, whatever the client, and journaled with the identity.
func TestBulkNeedsAdminAtTheLayer(t *testing.T) {
	r := newTeamRig(t)
	bob, alice := r.who["bob"], r.who["alice"]
	many := func(who action.Identity, name string, ids ...string) []error {
		reqs := make([]action.Request, len(ids))
		for i, id := range ids {
			reqs[i] = action.Request{SandboxID: id, Identity: who}
		}
		return r.d.Layer().Many(context.Background(), reqs, 2, func(ctx context.Context, req action.Request) error {
			_, err := r.d.Layer().Snapshot(ctx, req, backends.SnapshotOptions{Name: name})
			return err
		})
	}
	for i, err := range many(bob, "bulk", r.ids[0], r.ids[1]) {
		if !errors.Is(err, operators.ErrRole) || !strings.Contains(err.Error(), "many sandboxes at once needs admin") {
			t.Errorf("bob's bulk snapshot %d = %v; want a role refusal", i, err)
		}
	}
	e := r.outcome(t, string(backends.ActionSnapshot), r.ids[0])
	if e.Outcome != state.OutcomeRefused || !strings.Contains(e.Error, "bob is operator") {
		t.Errorf("bulk refusal journaled as %+v", e)
	}
	identified(t, e, bob)
	// One sandbox at a time stays bob's to act on; many at once is alice's.
	if errs := many(bob, "one", r.ids[2]); errs[0] != nil {
		t.Errorf("bob's single snapshot = %v", errs[0])
	}
	for i, err := range many(alice, "bulk", r.ids[0], r.ids[1]) {
		if err != nil {
			t.Errorf("alice's bulk snapshot %d = %v", i, err)
		}
	}
}

// TestViewerAckRefused: acknowledging an alert is refused to a viewer by the daemon's roster
// (through watch.Ack, the function that acknowledges) and journaled with the whole identity; an
// operator's goes through.
func TestViewerAckRefused(t *testing.T) {
	r := newTeamRig(t)
	vic, bob := r.who["vic"], r.who["bob"]
	as, err := r.db.AddAlerts([]state.Alert{{Time: time.Now(), SandboxID: r.ids[0], Kind: state.AlertExec, Summary: "exec sh"}})
	if err != nil {
		t.Fatal(err)
	}
	id := as[0].ID
	_, err = watch.Ack(r.db, id, vic, r.d.Roster().AuthorizeAck, nil)
	if !errors.Is(err, operators.ErrRole) || !strings.Contains(err.Error(), "vic is viewer") {
		t.Fatalf("viewer ack = %v; want a role refusal", err)
	}
	if open, _ := r.db.Alerts(state.AlertQuery{Open: true}); len(open) != 1 {
		t.Fatalf("the viewer's refused ack acknowledged the alert")
	}
	e := r.outcome(t, watch.ActionAck, "")
	if e.Outcome != state.OutcomeRefused {
		t.Errorf("viewer ack journaled as %+v", e)
	}
	identified(t, e, vic)
	if _, err := watch.Ack(r.db, id, bob, r.d.Roster().AuthorizeAck, nil); err != nil {
		t.Fatalf("operator ack = %v", err)
	}
	e = r.outcome(t, watch.ActionAck, r.ids[0])
	if e.Outcome != state.OutcomeOK {
		t.Errorf("operator ack journaled as %+v", e)
	}
	identified(t, e, bob)
}
