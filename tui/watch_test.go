package tui

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	sbx "github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/watch"
)

// startWatch runs the containment watch for a harness that asks for it (nil otherwise).
func startWatch(t testing.TB, on bool, ctx context.Context, sup *supervisor.Supervisor, db *state.DB) *watch.Watcher {
	if !on {
		return nil
	}
	// Deferred, as the workbench wires it: the program must begin it.
	w, err := watch.New(sup, db, watch.Options{Interval: 20 * time.Millisecond, Deferred: true, BeginWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { <-done })
	return w
}

// containable is a backend with one hardened sandbox that can be quarantined and released; the
// test drives its posture through its events like an engine would.
type containable struct {
	fakeBackend
	quarantined []string
	released    []string
}

func (c *containable) Quarantine(ctx context.Context, id string, save func([]byte) error) error {
	if err := save([]byte(`{"endpoints":[{"network":"egress"}]}`)); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.quarantined = append(c.quarantined, id)
	return nil
}

func (c *containable) Release(ctx context.Context, id string, plan []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released = append(c.released, id+" "+string(plan))
	return nil
}

func (c *containable) send(ev backends.Event) {
	c.mu.Lock()
	emit := c.emit
	c.mu.Unlock()
	emit(ev)
}

// A sandbox that weakens while the workbench is open: the alert line appears in the header and
// the row is marked; :alerts shows the evidence and acknowledges by key (journaled with the
// operator); Q quarantines after confirmation and the row says so; U releases.
func TestAlertLineMarksAckAndQuarantine(t *testing.T) {
	c := &containable{fakeBackend: fakeBackend{name: "docker:q", kind: backends.KindDocker}}
	c.fleet = []backends.Sandbox{sandbox("docker:q", backends.KindDocker, "hardened", "ctf", 1, time.Minute)}
	h := newHarness(t, harnessOpts{w: 140, h: 30, watch: true, extra: []backends.Backend{c}})
	h.waitText("hardened")
	// Let the watch record the baseline, then the agent joins an egress network.
	waitBaseline(t, h.db, "docker:q/hardened")
	c.send(backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: t0, SandboxID: "docker:q/hardened", Member: "hardened-default-1",
		Kind: sbx.ActNetConnect, Actor: "docker network connect", Detail: "joined network egress", Attrs: map[string]string{"network": "egress"}}})
	weak := sandbox("docker:q", backends.KindDocker, "hardened", "ctf", 1, time.Minute, backends.Finding{RuleID: "CMP-N03", Severity: catalog.SeverityHigh,
		Axis: catalog.AxisNetwork, Member: "hardened-default-1", Message: "on network egress, which is not internal", Evidence: "network egress Internal=false"})
	c.send(backends.Event{Type: backends.EventUpsert, Sandbox: weak})
	f := h.waitText("ALERT HIGH hardened: new HIGH CMP-N03")
	if !strings.Contains(rowOf(f, "hardened"), "!") {
		t.Errorf("the row is not marked:\n%s", f)
	}
	h.key(":")
	h.typeText("alerts")
	h.key("enter")
	f = h.waitText("alerts  (1, 1 open")
	for _, want := range []string{"before: (not in baseline", "after:  HIGH CMP-N03 on hardened-default-1", "network-connect hardened-default-1 joined network egress", "cause:  docker network connect"} {
		if !strings.Contains(f, want) {
			t.Errorf("evidence lacks %q:\n%s", want, f)
		}
	}
	h.key("A")
	h.waitText("alert 1 acknowledged by op@test")
	h.waitText("alerts  (1, 0 open")
	if js, _ := h.db.Journal(state.JournalQuery{}); len(js) < 2 || js[len(js)-1].Action != watch.ActionAck || js[len(js)-1].Operator != "op@test" {
		t.Errorf("ack not journaled with the operator: %+v", js)
	}
	// Quarantine from the alert: confirmed, then marked in the fleet.
	h.key("Q")
	h.waitText("quarantine hardened?")
	h.key("tab", "enter")
	h.waitText("quarantine hardened done")
	h.key("esc")
	f = h.waitFor("the quarantined row", func(f string) bool { return strings.Contains(rowOf(f, "hardened"), "isolated") })
	if !strings.HasPrefix(strings.TrimSpace(rowOf(f, "hardened")), "Q") {
		t.Errorf("quarantined row not marked Q:\n%s", f)
	}
	h.key(":")
	h.typeText("filter hardened")
	h.key("enter")
	h.waitText("1/5 sandboxes")
	h.key("enter")
	h.waitText("QUARANTINED by op@test") // the detail says so too
	h.key("esc")
	h.waitText("1/5 sandboxes")
	h.key("U")
	h.waitText("release hardened?")
	h.key("tab", "enter")
	h.waitText("release hardened done")
	h.waitFor("the mark gone", func(f string) bool { return !strings.Contains(rowOf(f, "hardened"), "isolated") })
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.quarantined) != 1 || len(c.released) != 1 || !strings.Contains(c.released[0], `"network":"egress"`) {
		t.Errorf("backend saw quarantine %v release %v", c.quarantined, c.released)
	}
}

func rowOf(frame, name string) string {
	for _, l := range strings.Split(frame, "\n") {
		if strings.Contains(l, name) && !strings.Contains(l, "ALERT") {
			return l
		}
	}
	return ""
}

func waitBaseline(t *testing.T, db *state.DB, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		bs, _ := db.Baselines()
		for _, b := range bs {
			if b.SandboxID == id {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no baseline for " + id)
}

// An idle workbench does not re-read the alerts every poll: where the state file cannot report
// writes, the poll only compares its generation; an alert another process stores is read at the
// next poll after the write. (Each poll waits WatchPoll: the test leaves the global alone, other
// tests' programs may still read it.)
func TestWatchPollSkipsAnUnwrittenStateFile(t *testing.T) {
	ctx, w, db, path := watchOnly(t)
	past := time.Now().Add(-time.Hour) // an old file: its generation is trusted
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	first := waitWatch(ctx, w, db, watchCursor{}, true)().(watchMsg)
	if !first.full || first.err != nil {
		t.Fatalf("first read %+v", first)
	}
	polled := watchCursor{gen: first.at.gen} // no notifications: the poll path
	if poll := waitWatch(ctx, w, db, polled, false)().(watchMsg); !poll.same {
		t.Fatalf("an unwritten file was read again: %+v", poll)
	}
	other, err := state.Open(path) // another process
	if err != nil {
		t.Fatal(err)
	}
	plantAlert(t, other)
	poll := waitWatch(ctx, w, db, polled, false)().(watchMsg)
	if poll.same || !poll.full || len(poll.open) != 1 || poll.open[0].Summary != "planted" {
		t.Fatalf("after another process's write: %+v", poll)
	}
}

// Where the state file reports writes, an idle workbench does not wake to look at it: the wait
// ends at another process's write, at once, with a full read.
func TestWatchWaitsForAWriteNotAPoll(t *testing.T) {
	ctx, w, db, path := watchOnly(t)
	first := waitWatch(ctx, w, db, watchCursor{}, true)().(watchMsg)
	if first.at.written == nil {
		if runtime.GOOS == "linux" {
			t.Fatal("no write notifications on Linux (inotify)")
		}
		t.Skip("this platform reports no writes: the poll path (above) applies")
	}
	got := make(chan watchMsg, 1)
	go func() { got <- waitWatch(ctx, w, db, first.at, false)().(watchMsg) }()
	select {
	case msg := <-got:
		t.Fatalf("the wait ended with nobody writing (WatchPoll is %s): %+v", WatchPoll, msg)
	case <-time.After(3 * WatchPoll):
	}
	other, err := state.Open(path) // another process
	if err != nil {
		t.Fatal(err)
	}
	wrote := time.Now()
	plantAlert(t, other)
	select {
	case msg := <-got:
		if !msg.full || len(msg.open) != 1 || msg.open[0].Summary != "planted" {
			t.Fatalf("after another process's write: %+v", msg)
		}
		if msg.at.written == nil || msg.at.written == first.at.written {
			t.Error("the read did not take a fresh write notification before reading")
		}
		t.Logf("read %s after the write", time.Since(wrote).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("another process's write did not end the wait")
	}
}

// watchOnly is a watch over one fake backend and a fresh state file, not run: the test alone
// writes the file.
func watchOnly(t *testing.T) (context.Context, *watch.Watcher, *state.DB, string) {
	t.Helper()
	d := &fakeBackend{name: "docker:test", kind: backends.KindDocker}
	sup := supervisor.New([]backends.Backend{d}, supervisor.Backoff{Min: 50 * time.Millisecond, Max: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	t.Cleanup(func() { cancel(); wait() })
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w, err := watch.New(sup, db, watch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, w, db, path
}

func plantAlert(t *testing.T, db *state.DB) {
	t.Helper()
	if _, err := db.AddAlerts([]state.Alert{{Time: time.Now(), SandboxID: "docker:test/p", Kind: state.AlertDrift, Rule: "CMP-N03", Summary: "planted"}}); err != nil {
		t.Fatal(err)
	}
}
