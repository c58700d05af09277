package watch

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// fed is a backend whose Watch lists its sandboxes and then emits whatever the test sends.
type fed struct {
	name   string
	list   []backends.Sandbox
	events chan backends.Event
}

func (f *fed) Name() string        { return f.name }
func (f *fed) Kind() backends.Kind { return backends.KindDocker }
func (f *fed) Watch(ctx context.Context, emit func(backends.Event)) error {
	emit(backends.Event{Type: backends.EventReset, Sandboxes: f.list})
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-f.events:
			emit(ev)
		}
	}
}

func hardened(id string, extra ...sandbox.Finding) backends.Sandbox {
	fs := append([]sandbox.Finding{{RuleID: "CMP-R03", Severity: catalog.SeverityMedium, Axis: "H", Member: "agent", Message: "no PID limit", Evidence: "HostConfig.PidsLimit unset"}}, extra...)
	return backends.Sandbox{ID: id, Name: id, Actionable: true, Status: backends.StatusRunning, Findings: fs}
}

var egress = sandbox.Finding{RuleID: "CMP-N03", Severity: catalog.SeverityHigh, Axis: "N", Member: "agent",
	Message: "on network egress, which is not internal", Evidence: "network egress Internal=false"}

// rig is a real supervisor over a fed backend and a real state file, with a watcher on both.
type rig struct {
	b   *fed
	sup *supervisor.Supervisor
	db  *state.DB
	w   *Watcher
}

func newRig(t *testing.T, opts Options, list ...backends.Sandbox) *rig {
	t.Helper()
	r := &rig{b: &fed{name: "docker:test", list: list, events: make(chan backends.Event, 16)}}
	r.sup = supervisor.New([]backends.Backend{r.b}, supervisor.Backoff{Min: time.Millisecond, Max: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wait := r.sup.Start(ctx)
	t.Cleanup(func() { cancel(); wait() })
	if missing := r.sup.WaitReady(ctx); len(missing) > 0 {
		t.Fatal("backend never listed")
	}
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r.db = db
	r.reopen(t, opts)
	return r
}

func (r *rig) reopen(t *testing.T, opts Options) {
	t.Helper()
	w, err := New(r.sup, r.db, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.w = w
}

// send emits an event and waits until the supervisor applied it.
func (r *rig) send(t *testing.T, ev backends.Event) {
	t.Helper()
	v := r.sup.Version(r.b.name)
	_, cur, _ := r.sup.Activity(0)
	r.b.events <- ev
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		_, next, _ := r.sup.Activity(0)
		if r.sup.Version(r.b.name) != v || next != cur {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("event not applied")
}

func (r *rig) alerts(t *testing.T) []state.Alert {
	t.Helper()
	as, err := r.db.Alerts(state.AlertQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// A sandbox's first posture is its baseline; a network connect that adds a HIGH finding raises
// one alert naming before, after and the event; refreshes of the same weakness raise no more, a
// LOW finding stays below the default threshold, and a severity increase alerts.
func TestDriftAgainstBaselineRaisesOneAlertWithEvidence(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	r.w.Step()
	if as := r.alerts(t); len(as) != 0 {
		t.Fatalf("first sight raised %v", as)
	}
	bs, _ := r.db.Baselines()
	if len(bs) != 1 || bs[0].Reason != ReasonFirstSeen || len(bs[0].Findings) != 1 {
		t.Fatalf("baselines %+v", bs)
	}
	at := time.Now()
	r.send(t, backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: at, SandboxID: "docker:test/p1", Member: "agent",
		Kind: sandbox.ActNetConnect, Detail: "joined network egress", Attrs: map[string]string{"network": "egress"}}})
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	r.w.Step()
	as := r.alerts(t)
	if len(as) != 1 {
		t.Fatalf("alerts %+v, want one", as)
	}
	a := as[0]
	if a.Kind != state.AlertDrift || a.Rule != "CMP-N03" || a.Severity != catalog.SeverityHigh || a.Member != "agent" {
		t.Errorf("alert %+v", a)
	}
	if !strings.Contains(a.Before, "not in baseline") || !strings.Contains(a.After, "network egress Internal=false") {
		t.Errorf("evidence before %q after %q", a.Before, a.After)
	}
	if a.Event == nil || a.Event.Kind != sandbox.ActNetConnect || a.Event.Attrs["network"] != "egress" {
		t.Errorf("event %+v, want the network connect", a.Event)
	}
	low := sandbox.Finding{RuleID: "CMP-H09", Severity: catalog.SeverityLow, Member: "agent", Message: "NET_RAW", Evidence: "caps"}
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress, low)})
	r.w.Step()
	if n := len(r.alerts(t)); n != 1 {
		t.Fatalf("%d alerts after a refresh with the same weakness and a LOW finding, want 1", n)
	}
	worse := hardened("docker:test/p1", egress)
	worse.Findings[0].Severity = catalog.SeverityHigh
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: worse})
	r.w.Step()
	as = r.alerts(t)
	if len(as) != 2 || as[1].Rule != "CMP-R03" || !strings.Contains(as[1].Summary, "rose from MEDIUM to HIGH") || !strings.HasPrefix(as[1].Before, "MEDIUM CMP-R03") {
		t.Fatalf("severity increase: %+v", as)
	}
	// The watch restarts: nothing already alerted is alerted again.
	r.reopen(t, Options{})
	r.w.Step()
	if n := len(r.alerts(t)); n != 2 {
		t.Fatalf("%d alerts after a restart, want the same 2", n)
	}
}

// A sandbox listed with its posture pending (Kubernetes: policies still loading) is neither
// baselined nor alerted on: the findings that arrive with the complete posture are its
// baseline, not a weakening. A weakening after that still alerts.
func TestPendingPostureIsNotABaseline(t *testing.T) {
	pending := hardened("docker:test/p1")
	pending.PosturePending = "network posture: policies still loading"
	r := newRig(t, Options{}, pending)
	r.w.Step()
	if bs, _ := r.db.Baselines(); len(bs) != 0 {
		t.Fatalf("pending posture baselined: %+v", bs)
	}
	r.send(t, backends.Event{Type: backends.EventReset, Sandboxes: []backends.Sandbox{hardened("docker:test/p1", egress)}})
	r.w.Step()
	if as := r.alerts(t); len(as) != 0 {
		t.Fatalf("the complete posture raised %+v", as)
	}
	bs, _ := r.db.Baselines()
	if len(bs) != 1 || len(bs[0].Findings) != 2 || bs[0].Reason != ReasonFirstSeen {
		t.Fatalf("baselines %+v, want the complete posture", bs)
	}
	worse := hardened("docker:test/p1", egress)
	worse.Findings[0].Severity = catalog.SeverityHigh
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: worse})
	r.w.Step()
	if as := r.alerts(t); len(as) != 1 || as[0].Rule != "CMP-R03" {
		t.Fatalf("alerts %+v, want the rise of CMP-R03", as)
	}
}

// An exec is an alert of its own, naming the user and command, never the arguments; an ack is
// kept with the operator, survives reopening the state file and is journaled.
func TestExecAlertAndAckSurviveRestart(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	r.w.Step()
	r.send(t, backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: time.Now(), SandboxID: "docker:test/p1", Member: "agent",
		Kind: sandbox.ActExec, Actor: "user 0", Detail: "exec sh as 0 (arguments not recorded)",
		Attrs: map[string]string{"user": "0", "command": "sh", "privileged": "true"}}})
	r.w.Step()
	as := r.alerts(t)
	if len(as) != 1 || as[0].Kind != state.AlertExec || as[0].Severity != catalog.SeverityHigh ||
		as[0].Summary != "exec sh as user 0 in agent (arguments not recorded), privileged" || as[0].Cause != "user 0" {
		t.Fatalf("exec alerts %+v", as)
	}
	changed := r.w.Changed()
	alice := state.Identity{Operator: "alice", Transport: "ssh", Fingerprint: "SHA256:alicekey", Source: "192.0.2.7:50022"}
	// A role that may not act is refused by Ack itself (not only hidden by a UI), journaled with
	// the full identity; the alert stays open.
	vic := state.Identity{Operator: "vic", Transport: "ssh", Fingerprint: "SHA256:vickey", Source: "192.0.2.9:40000"}
	errViewer := errors.New("vic is viewer, acknowledging an alert needs operator")
	onlyAlice := func(who state.Identity) error {
		if who.Operator != "alice" {
			return errViewer
		}
		return nil
	}
	if _, err := r.w.Ack(as[0].ID, vic, onlyAlice); !errors.Is(err, errViewer) {
		t.Fatalf("viewer ack = %v; want the authorizer's refusal", err)
	}
	if open, _ := r.db.Alerts(state.AlertQuery{Open: true}); len(open) != 1 {
		t.Fatalf("a refused ack acknowledged the alert: %+v", open)
	}
	if _, err := r.w.Ack(as[0].ID, alice, onlyAlice); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Error("an ack did not signal the open workbenches")
	}
	path := r.db.Path()
	r.db.Close()
	db, err := state.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r.db = db
	as, _ = db.Alerts(state.AlertQuery{})
	if len(as) != 1 || as[0].Ack == nil || as[0].Ack.Operator != "alice" || as[0].Ack.Time.IsZero() {
		t.Fatalf("after reopening: %+v", as)
	}
	if open, _ := db.Alerts(state.AlertQuery{Open: true}); len(open) != 0 {
		t.Errorf("acknowledged alert still open: %+v", open)
	}
	js, _ := db.Journal(state.JournalQuery{})
	if len(js) != 4 || js[3].Action != ActionAck || js[3].Operator != "alice" || js[3].Outcome != state.OutcomeOK || js[3].Target != "docker:test/p1" {
		t.Fatalf("journal %+v", js)
	}
	if js[1].Outcome != state.OutcomeRefused || !strings.Contains(js[1].Error, "vic is viewer") {
		t.Errorf("the viewer's refusal was not journaled: %+v", js[1])
	}
	// Every entry, intent and outcome, refused or done, carries the whole identity.
	for i, e := range js {
		who := alice
		if i < 2 {
			who = vic
		}
		if got := (state.Identity{Operator: e.Operator, Transport: e.Transport, Fingerprint: e.Fingerprint, Source: e.Source}); got != who {
			t.Errorf("journal entry %d (%s %s) carries %+v; want %+v", i, e.Phase, e.Outcome, got, who)
		}
	}
	if _, err := Ack(db, 99, alice, nil, nil); err == nil {
		t.Error("acknowledging an unknown alert succeeded")
	}
}

// A successful probe journaled for a sandbox makes its current posture the new baseline: what
// was drift becomes the norm and is no longer compared against.
func TestProbeOutcomeRebaselines(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	r.w.Step()
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	r.w.Step()
	in, _ := r.db.Append(state.Entry{Action: "probe", Target: "docker:test/p1", Phase: state.PhaseIntent})
	r.db.Append(state.Entry{Action: "probe", Target: "docker:test/p1", Phase: state.PhaseOutcome, Intent: in.Seq, Outcome: state.OutcomeOK})
	r.w.Step()
	bs, _ := r.db.Baselines()
	if len(bs) != 1 || bs[0].Reason != ReasonProbe || len(bs[0].Findings) != 2 {
		t.Fatalf("baseline after probe %+v", bs)
	}
	// Back to hardened and then the same egress again: not drift against the new baseline.
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1")})
	r.w.Step()
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	r.w.Step()
	if n := len(r.alerts(t)); n != 1 {
		t.Fatalf("%d alerts, want only the one before the probe", n)
	}
}

// The hook gets each alert as JSON on stdin; a failing or hanging hook is recorded on the alert
// and reported, and never holds the watch up.
func TestHookGetsJSONFailureAndTimeoutRecorded(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "alert.json")
	script := filepath.Join(dir, "hook.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nread -r line\necho \"$line\" > \""+out+"\"\ncase \"$line\" in *exec*) exit 0;; *CMP-N03*) echo pager down >&2; exit 3;; esac\nsleep 30\n"), 0o755)
	// The timeout leaves a shell started on a saturated CI machine time to answer (300 ms did not,
	// on 2 cores busy compiling); a step that waited for the hook would still take all of it.
	const timeout = 2 * time.Second
	r := newRig(t, Options{Hook: []string{script}, HookTimeout: timeout}, hardened("docker:test/p1"))
	r.w.Step()
	r.send(t, backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: time.Now(), SandboxID: "docker:test/p1", Member: "agent",
		Kind: sandbox.ActExec, Attrs: map[string]string{"user": "1000", "command": "ls", "privileged": "false"}}})
	r.w.Step()
	waitAlert(t, r.db, 1, func(a state.Alert) bool { return a.Hook == HookOK })
	var got state.Alert
	raw, _ := os.ReadFile(out)
	if err := json.Unmarshal(raw, &got); err != nil || got.ID != 1 || got.Kind != state.AlertExec {
		t.Fatalf("hook stdin %s (%v)", raw, err)
	}
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	r.w.Step()
	waitAlert(t, r.db, 2, func(a state.Alert) bool { return strings.HasPrefix(a.Hook, "failed: exit status 3: pager down") })
	slow := egress
	slow.RuleID, slow.Message = "CMP-H01", "privileged"
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress, slow)})
	before := time.Now()
	r.w.Step()
	if d := time.Since(before); d > timeout/2 {
		t.Errorf("a step with a hanging hook took %s", d)
	}
	waitAlert(t, r.db, 3, func(a state.Alert) bool { return a.Hook == "failed: timed out after 2s" })
	deadline := time.Now().Add(5 * time.Second)
	for len(r.w.Errors()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if errs := r.w.Errors(); len(errs) != 2 || !strings.Contains(errs[1], "alert 3: hook failed: timed out") {
		t.Errorf("errors shown %q", errs)
	}
}

func waitAlert(t *testing.T, db *state.DB, id uint64, ok func(state.Alert) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last []state.Alert
	for time.Now().Before(deadline) {
		last, _ = db.Alerts(state.AlertQuery{After: id - 1})
		if len(last) > 0 && last[0].ID == id && ok(last[0]) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("alert %d never matched: %+v", id, last)
}

// An exec the action layer itself runs (a probe, an operator's exec) is still an alert, but its
// cause names the journaled action and who asked, even when its event arrives after the outcome.
func TestOwnExecAttributedToTheJournaledAction(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	r.w.Step()
	in, _ := r.db.Append(state.Entry{Operator: "alice", Action: "probe", Target: "docker:test/p1", Phase: state.PhaseIntent})
	r.db.Append(state.Entry{Operator: "alice", Action: "probe", Target: "docker:test/p1", Phase: state.PhaseOutcome, Intent: in.Seq, Outcome: state.OutcomeOK,
		Time: time.Now().Add(time.Second)})
	r.send(t, backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: time.Now(), SandboxID: "docker:test/p1", Member: "agent",
		Kind: sandbox.ActExec, Actor: "user 0", Attrs: map[string]string{"user": "0", "command": "rk-probe", "privileged": "false"}}})
	r.w.Step()
	as := r.alerts(t)
	if len(as) != 1 || as[0].Cause != "rangekeeper probe by alice" {
		t.Fatalf("alerts %+v", as)
	}
}

// A torn-down sandbox's baseline is forgotten: a later sandbox with the same ID starts from its
// own first sight instead of being compared with a stranger's posture.
func TestRemovedSandboxForgetsItsBaseline(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"), hardened("docker:test/p2"))
	r.w.Step()
	r.send(t, backends.Event{Type: backends.EventRemove, ID: "docker:test/p1"})
	r.w.Step()
	bs, _ := r.db.Baselines()
	if len(bs) != 1 || bs[0].SandboxID != "docker:test/p2" {
		t.Fatalf("baselines after the removal %+v, want p2 only", bs)
	}
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	r.w.Step()
	if as := r.alerts(t); len(as) != 0 {
		t.Fatalf("a new sandbox reusing the ID was compared with the old baseline: %+v", as)
	}
}

// Run does not poll the fleet: with an hour-long Interval, a weakening still raises its alert at
// once, because the supervisor's fleet change wakes the watch (an idle watch costs no wake-ups).
func TestRunWakesOnFleetChangeNotOnATimer(t *testing.T) {
	r := newRig(t, Options{Interval: time.Hour}, hardened("docker:test/p1"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	r.waitFirstBaseline(t)
	sent := time.Now()
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	waitAlert(t, r.db, 1, func(a state.Alert) bool { return a.Rule == "CMP-N03" })
	if d := time.Since(sent); d > 2*time.Second {
		t.Errorf("alert after %s", d)
	}
}

// Run does not poll the state file where it reports writes: with the default Interval (30 s
// then), another process's journaled probe re-baselines the sandbox at once, woken by the write.
func TestRunWakesOnAnotherProcessesWrite(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	if r.db.Written() == nil {
		if runtime.GOOS == "linux" {
			t.Fatal("no write notifications on Linux (inotify)")
		}
		t.Skip("this platform reports no writes: the watch polls every 2 s")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	r.waitFirstBaseline(t)
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	waitAlert(t, r.db, 1, func(a state.Alert) bool { return a.Rule == "CMP-N03" })
	other, err := state.Open(r.db.Path()) // another process: the CLI's probe
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	in, _ := other.Append(state.Entry{Action: "probe", Target: "docker:test/p1", Phase: state.PhaseIntent})
	if _, err := other.Append(state.Entry{Action: "probe", Target: "docker:test/p1", Phase: state.PhaseOutcome, Intent: in.Seq, Outcome: state.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	journaled := time.Now()
	for deadline := journaled.Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		bs, _ := r.db.Baselines()
		if len(bs) == 1 && bs[0].Reason == ReasonProbe {
			t.Logf("re-baselined %s after the journal write", time.Since(journaled).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no re-baseline within 5 s of another process's journal write (baselines %+v)", bs)
		}
	}
}

// waitFirstBaseline waits for the running watch's first step to take its baseline.
func (r *rig) waitFirstBaseline(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for bs, _ := r.db.Baselines(); len(bs) == 0; bs, _ = r.db.Baselines() {
		if time.Now().After(deadline) {
			t.Fatal("no baseline taken")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// between is a Source that delivers events while a step is between its two reads (the fleets and
// the activity), in whichever order the step makes them.
type between struct {
	Source
	inject func()
	first  string
}

func (b *between) read(kind string) {
	switch {
	case b.inject == nil:
	case b.first == "":
		b.first = kind
	case b.first != kind:
		inject := b.inject
		b.inject = nil
		inject()
	}
}

func (b *between) Backends() []backends.Backend { b.read("fleet"); return b.Source.Backends() }

func (b *between) Activity(cursor uint64) ([]backends.Activity, uint64, uint64) {
	b.read("activity")
	return b.Source.Activity(cursor)
}

// A network connect and the weakening it causes that land while a step runs are never split so
// that the weakening is seen without its cause: the alert names the connect (it was missing
// under load when the step read the activity before the fleets).
func TestAlertKeepsItsCauseWhenBothArriveMidStep(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	src := &between{Source: r.sup}
	w, err := New(src, r.db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Step() // the baseline
	connect := backends.Activity{Time: time.Now(), SandboxID: "docker:test/p1", Member: "agent", Kind: sandbox.ActNetConnect,
		Actor: "docker network connect", Detail: "joined network egress"}
	src.inject = func() {
		r.send(t, backends.Event{Type: backends.EventActivity, Activity: &connect})
		r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", egress)})
	}
	w.Step()
	w.Step()
	as := r.alerts(t)
	if len(as) != 1 || as[0].Rule != "CMP-N03" {
		t.Fatalf("alerts %+v, want the one weakening", as)
	}
	if as[0].Event == nil || as[0].Event.Kind != sandbox.ActNetConnect {
		t.Errorf("the alert lost its cause: event %+v, cause %q", as[0].Event, as[0].Cause)
	}
}

// flakyBaselines is the state file whose baselines cannot be read until ok is set; it counts
// the reads.
type flakyBaselines struct {
	*state.DB
	ok    bool
	reads int
}

func (f *flakyBaselines) Baselines() ([]state.Baseline, error) {
	f.reads++
	if !f.ok {
		return nil, os.ErrPermission
	}
	return f.DB.Baselines()
}

// New reads no baselines (the workbench builds its watcher before its first frame); a step that
// cannot read them compares nothing and says so, and the kept baseline survives to be used.
func TestBaselinesAreReadAtTheFirstStepAndAFailedReadOverwritesNothing(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1", egress))
	kept := state.Baseline{SandboxID: "docker:test/p1", Reason: ReasonProbe, Findings: hardened("docker:test/p1").Findings}
	if err := r.db.PutBaselines([]state.Baseline{kept}); err != nil {
		t.Fatal(err)
	}
	store := &flakyBaselines{DB: r.db}
	w, err := New(r.sup, store, Options{})
	if err != nil || store.reads != 0 {
		t.Fatalf("New: err %v, %d baseline reads", err, store.reads)
	}
	w.Step()
	if errs := w.Errors(); len(errs) != 1 || !strings.Contains(errs[0], "baselines not read") {
		t.Fatalf("errors after an unreadable step: %q", errs)
	}
	if bs, _ := r.db.Baselines(); len(bs) != 1 || bs[0].Reason != ReasonProbe {
		t.Fatalf("baselines after an unreadable step: %+v", bs)
	}
	if as := r.alerts(t); len(as) != 0 {
		t.Fatalf("an unreadable step raised %v", as)
	}
	if err := w.Rebaseline("docker:test/p1", ReasonProbe); err == nil || !strings.Contains(err.Error(), "baselines not read") {
		t.Fatalf("Rebaseline without baselines = %v", err)
	}
	store.ok = true
	w.Step() // the kept baseline lacks the egress finding: drift against it, not a first sight
	if as := r.alerts(t); len(as) != 1 || as[0].Rule != "CMP-N03" {
		t.Fatalf("alerts once the baselines are read: %+v", as)
	}
	w.Step()
	if store.reads != 3 {
		t.Fatalf("baseline reads = %d, want 3 (two failed, one kept)", store.reads)
	}
}

// countedBaselines counts the reads of the stored baselines (from Run's goroutine).
type countedBaselines struct {
	*state.DB
	reads atomic.Int32
}

func (c *countedBaselines) Baselines() ([]state.Baseline, error) {
	c.reads.Add(1)
	return c.DB.Baselines()
}

// A Deferred watcher's first step (and its read of every stored baseline) waits for Begin, so a
// start paints its cached fleet first; without Begin it waits no longer than BeginWait, and a
// watcher that is not Deferred steps at once.
func TestDeferredRunWaitsForBegin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		begin bool // Begin is called after 200 ms
		early bool // a step comes within those 200 ms
	}{
		{"begun", Options{Deferred: true, BeginWait: time.Minute}, true, false},
		{"never begun", Options{Deferred: true, BeginWait: 50 * time.Millisecond}, false, true},
		{"not deferred", Options{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Options{}, hardened("docker:test/p1"))
			store := &countedBaselines{DB: r.db}
			w, err := New(r.sup, store, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { w.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()
			time.Sleep(200 * time.Millisecond)
			if n := store.reads.Load(); (n > 0) != tc.early {
				t.Fatalf("baseline reads in the first 200 ms = %d, want early=%v", n, tc.early)
			}
			if tc.begin {
				w.Begin()
				w.Begin() // idempotent
			}
			for deadline := time.Now().Add(5 * time.Second); store.reads.Load() == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the first step never came")
				}
			}
		})
	}
}

// joinedEgress is egress as the Docker backend reports it: about the one network, whose connect
// event is its cause.
var joinedEgress = func() sandbox.Finding { f := egress; f.Network = "egress"; return f }()

func connectTo(network string) backends.Event {
	return backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{Time: time.Now(), SandboxID: "docker:test/p1",
		Member: "agent", Kind: sandbox.ActNetConnect, Actor: "docker network connect", Detail: "joined network " + network,
		Attrs: map[string]string{"network": network}}}
}

// The engine's events lag its inspect data under load: the re-read after an older connect (to
// the inner network) already shows the egress network. The alert waits for the connect to
// egress and names it, never the older connect.
func TestNetworkAlertWaitsForItsOwnConnect(t *testing.T) {
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	r.w.Step() // the baseline
	r.send(t, connectTo("inner"))
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", joinedEgress)})
	r.w.Step()
	if as := r.alerts(t); len(as) != 0 {
		t.Fatalf("alert raised before its cause arrived: %+v (event %+v)", as, as[0].Event)
	}
	if d := r.w.wait(true); d <= 0 || d > causeWait {
		t.Errorf("Run would look again in %s, want within the cause wait of %s", d, causeWait)
	}
	r.send(t, connectTo("egress"))
	r.w.Step()
	as := r.alerts(t)
	if len(as) != 1 || as[0].Rule != "CMP-N03" {
		t.Fatalf("alerts %+v, want the one weakening", as)
	}
	if ev := as[0].Event; ev == nil || ev.Attrs["network"] != "egress" || as[0].Cause != "docker network connect" {
		t.Errorf("cause %q event %+v, want the connect to egress", as[0].Cause, ev)
	}
	r.w.Step()
	if as := r.alerts(t); len(as) != 1 {
		t.Errorf("the released alert was raised again: %+v", as)
	}
}

// A network weakening whose connect never arrives (it happened while nothing watched) is raised
// once the wait is over, without a cause rather than with the wrong one.
func TestNetworkAlertWithoutItsConnectIsRaisedAfterTheWait(t *testing.T) {
	now := time.Now()
	r := newRig(t, Options{}, hardened("docker:test/p1"))
	r.reopen(t, Options{Now: func() time.Time { return now }})
	r.w.Step()
	r.send(t, connectTo("inner"))
	r.send(t, backends.Event{Type: backends.EventUpsert, Sandbox: hardened("docker:test/p1", joinedEgress)})
	r.w.Step()
	now = now.Add(causeWait - time.Millisecond)
	r.w.Step()
	if as := r.alerts(t); len(as) != 0 {
		t.Fatalf("alert raised before the wait was over: %+v", as)
	}
	if d := r.w.wait(true); d != time.Millisecond {
		t.Errorf("Run would look again in %s, want 1ms (the wait's end)", d)
	}
	now = now.Add(time.Millisecond)
	r.w.Step()
	as := r.alerts(t)
	if len(as) != 1 || as[0].Rule != "CMP-N03" || as[0].Event != nil || as[0].Cause != "" {
		t.Fatalf("alerts %+v, want the weakening without a cause", as)
	}
}
