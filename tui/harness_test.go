package tui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// t0 is the pinned clock of every golden test.
var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

// fakeBackend is a real in-memory backend: the supervisor runs its Watch, and its actions change
// its fleet and emit events like a real engine would.
type fakeBackend struct {
	name string
	kind backends.Kind

	mu        sync.Mutex
	fleet     []backends.Sandbox
	snaps     map[string][]backends.SnapshotInfo
	emit      func(backends.Event)
	gate      chan struct{} // when set, Snapshot waits for it (or ctx) before finishing
	started   chan string   // receives the action name when an action starts
	failWith  error         // when set, Snapshot and Teardown fail with it
	reverted  []string
	tornDown  []string
	snapCount int
}

func (f *fakeBackend) Name() string        { return f.name }
func (f *fakeBackend) Kind() backends.Kind { return f.kind }

func (f *fakeBackend) Watch(ctx context.Context, emit func(backends.Event)) error {
	f.mu.Lock()
	f.emit = emit
	sbs := append([]backends.Sandbox(nil), f.fleet...)
	f.mu.Unlock()
	emit(backends.Event{Type: backends.EventReset, Sandboxes: sbs})
	<-ctx.Done()
	return nil
}

func (f *fakeBackend) begin(ctx context.Context, what string) error {
	if f.started != nil {
		f.started <- what
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failWith
}

func (f *fakeBackend) Snapshot(ctx context.Context, id string, opts backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	if err := f.begin(ctx, "snapshot"); err != nil {
		return backends.SnapshotInfo{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapCount++
	name := opts.Name
	if name == "" {
		name = fmt.Sprintf("auto-%d", f.snapCount)
	}
	info := backends.SnapshotInfo{ID: fmt.Sprintf("snap-%d", f.snapCount), SandboxID: id, Name: name, Created: t0.Add(time.Duration(f.snapCount) * time.Minute)}
	if f.snaps == nil {
		f.snaps = map[string][]backends.SnapshotInfo{}
	}
	f.snaps[id] = append(f.snaps[id], info)
	return info, nil
}

func (f *fakeBackend) Snapshots(ctx context.Context, id string) ([]backends.SnapshotInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]backends.SnapshotInfo(nil), f.snaps[id]...), nil
}

func (f *fakeBackend) DeleteSnapshot(ctx context.Context, id, snap string) error { return nil }

func (f *fakeBackend) Revert(ctx context.Context, id, snap string, _ backends.RevertOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reverted = append(f.reverted, id+"@"+snap)
	return nil
}

func (f *fakeBackend) Teardown(ctx context.Context, id string, _ backends.TeardownOptions) error {
	if err := f.begin(ctx, "teardown"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tornDown = append(f.tornDown, id)
	for i, sb := range f.fleet {
		if sb.ID == id {
			f.fleet = append(f.fleet[:i], f.fleet[i+1:]...)
			break
		}
	}
	if f.emit != nil {
		f.emit(backends.Event{Type: backends.EventRemove, ID: id})
	}
	return nil
}

func (f *fakeBackend) Stats(ctx context.Context, id string) ([]backends.MemberStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sb := range f.fleet {
		if sb.ID == id {
			var out []backends.MemberStats
			for i, m := range sb.Members {
				out = append(out, backends.MemberStats{Member: m.Name, Running: m.Running, CPUPercent: float64(10 * (i + 1)), MemBytes: uint64(i+1) << 24, MemLimit: 1 << 28})
			}
			return out, nil
		}
	}
	return nil, backends.ErrNotFound
}

// Exec and the copies make the fake probe-capable; the test's ProbeFunc does not call them.
func (f *fakeBackend) Exec(ctx context.Context, id string, req backends.ExecRequest) (backends.ExecResult, error) {
	return backends.ExecResult{}, nil
}
func (f *fakeBackend) CopyTo(ctx context.Context, id, member, path string, data []byte, mode int64) error {
	return nil
}
func (f *fakeBackend) CopyFrom(ctx context.Context, id, member, path string) ([]byte, error) {
	return nil, nil
}

// fakeK8s supports reset only, like the Kubernetes backend.
type fakeK8s struct{ fakeBackend }

func (f *fakeK8s) Reset(ctx context.Context, id string) error { return nil }

func (f *fakeK8s) Unsupported(a backends.Action) string {
	if a == backends.ActionSnapshot || a == backends.ActionRevert {
		return string(a) + ": not supported by Kubernetes"
	}
	return ""
}

// fakeK8s must not look like a Snapshotter etc.: hide the embedded methods.
type k8sOnly struct{ f *fakeK8s }

func (k k8sOnly) Name() string        { return k.f.Name() }
func (k k8sOnly) Kind() backends.Kind { return k.f.Kind() }
func (k k8sOnly) Watch(ctx context.Context, emit func(backends.Event)) error {
	return k.f.Watch(ctx, emit)
}
func (k k8sOnly) Reset(ctx context.Context, id string) error { return k.f.Reset(ctx, id) }
func (k k8sOnly) Unsupported(a backends.Action) string       { return k.f.Unsupported(a) }

func sandbox(backend string, kind backends.Kind, name, task string, members int, age time.Duration, findings ...backends.Finding) backends.Sandbox {
	sb := backends.Sandbox{ID: backend + "/" + name, Name: name, Backend: kind, Endpoint: backend, Created: t0.Add(-age),
		Task: task, Inspect: true, Actionable: true, Findings: findings}
	for i := range members {
		svc := "default"
		if i > 0 {
			svc = fmt.Sprintf("svc%d", i)
		}
		sb.Members = append(sb.Members, backends.Member{ID: fmt.Sprintf("%s-%d", name, i), Name: name + "-" + svc + "-1", Service: svc,
			State: "running", Running: true, Image: "busybox-static:test", Created: sb.Created})
	}
	sb.Status = backends.DeriveStatus(sb.Members)
	return sb
}

func demoFleet() (*fakeBackend, *fakeK8s) {
	d := &fakeBackend{name: "docker:test", kind: backends.KindDocker}
	d.fleet = []backends.Sandbox{
		sandbox("docker:test", backends.KindDocker, "inspect-ctf-web-iabc123", "ctf-web", 2, 5*time.Minute,
			backends.Finding{RuleID: "DKR-CAP-01", Severity: catalog.SeverityHigh, Axis: catalog.AxisHost, Member: "default", Message: "default capabilities kept"},
			backends.Finding{RuleID: "DKR-NET-01", Severity: catalog.SeverityMedium, Axis: catalog.AxisNetwork, Member: "default", Message: "default bridge: egress open"}),
		sandbox("docker:test", backends.KindDocker, "inspect-ctf-pwn-idef456", "ctf-pwn", 1, 3*time.Hour),
		sandbox("docker:test", backends.KindDocker, "inspect-intercode-iggg789", "intercode", 3, 40*time.Second),
	}
	k := &fakeK8s{fakeBackend{name: "k8s:kwok", kind: backends.KindKubernetes}}
	k.fleet = []backends.Sandbox{sandbox("k8s:kwok", backends.KindKubernetes, "agent-env-x1", "cybench", 2, 2*time.Hour)}
	return d, k
}

// fakeProber stands in for the probe pipeline (tested against real containers in probe/ and
// cmd/): it keeps a probed report in the history like the pipeline does.
type fakeProber struct{ db *state.DB }

func (p fakeProber) Probe(_ context.Context, _ backends.Backend, sb backends.Sandbox, req probe.Request) (probe.Report, error) {
	rep := probe.Report{SandboxID: sb.ID, Member: req.Member, Time: t0, Result: probe.Result{SandboxID: sb.ID, Time: t0, Facts: &facts.Report{}}}
	return rep, probe.Save(p.db, rep)
}

// harness is a running program over a real supervisor, action layer and state file.
type harness struct {
	t      testing.TB
	tm     *teatest.TestModel
	frames *tuitest.Recorder
	db     *state.DB
	docker *fakeBackend
	layer  *action.Layer
}

type harnessOpts struct {
	w, h     int
	readOnly bool
	theme    string // "": auto (colourless: the harness sets NoColor unless a theme is named)
	keys     *keymap.Map
	extra    []backends.Backend
	setup    func(d *fakeBackend)
	setupDB  func(db *state.DB)
	tick     time.Duration // 0: 50 ms
	fps      int           // 0: the program's default
	// verify, when set, builds the author's verify runner over the harness's layer and state.
	verify func(layer *action.Layer, db *state.DB) func(context.Context, verify.Options) verify.Result
	watch  bool // run the containment watch over the supervisor and state file
	evals  *inspectlive.Watcher
	team   TeamOptions
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	if o.w == 0 {
		o.w, o.h = 80, 24
	}
	d, k := demoFleet()
	if o.setup != nil {
		o.setup(d)
	}
	bs := append([]backends.Backend{d, k8sOnly{k}}, o.extra...)
	sup := supervisor.New(bs, supervisor.Backoff{Min: 50 * time.Millisecond, Max: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	sup.WaitReady(rctx) // the extra (dead) backends never answer; that is fine
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	tick := o.tick
	if tick == 0 {
		tick = 50 * time.Millisecond
	}
	if o.setupDB != nil {
		o.setupDB(db)
	}
	layer := action.New(sup, db, action.Options{ReadOnly: o.readOnly, Identity: action.Identity{Operator: "op@test", Transport: action.TransportStandalone},
		Prober: fakeProber{db}})
	var run func(context.Context, verify.Options) verify.Result
	if o.verify != nil {
		run = o.verify(layer, db)
	}
	m := New(Options{Supervisor: sup, Actions: layer, State: db, Keys: o.keys, NoColor: o.theme == "", ReadOnly: o.readOnly, Theme: o.theme,
		Now: func() time.Time { return t0 }, Tick: tick, StatsEvery: time.Hour, BackgroundWait: 20 * time.Millisecond, Verify: run,
		Watch: startWatch(t, o.watch, ctx, sup, db), Team: o.team, Evals: o.evals})
	fm := &tuitest.Recorder{Model: m}
	topts := []teatest.TestOption{teatest.WithInitialTermSize(o.w, o.h)}
	if o.fps > 0 {
		topts = append(topts, teatest.WithProgramOptions(tea.WithFPS(o.fps)))
	}
	tm := teatest.NewTestModel(t, fm, topts...)
	h := &harness{t: t, tm: tm, frames: fm, db: db, docker: d, layer: layer}
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
		cancel()
		wait()
		db.Close()
	})
	if o.w < 60 || o.h < 12 {
		return h
	}
	h.waitFor("fleet", func(s string) bool {
		return strings.Contains(s, "sandboxes") && strings.Contains(s, "agent-env-x1") || strings.Contains(s, "/4 sandboxes")
	})
	return h
}

func (h *harness) frame() string { return h.frames.Frame() }

func (h *harness) rawFrame() string { return h.frames.Raw() }

// waitFor polls the rendered frame until cond holds, failing with the last frame after 10 s (the
// race detector on a loaded 2-core machine makes a bbolt fsync take seconds).
func (h *harness) waitFor(what string, cond func(string) bool) string {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := h.frame()
		if cond(f) {
			return f
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; last frame:\n%s", what, f)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) waitText(s string) string {
	h.t.Helper()
	return h.waitFor(fmt.Sprintf("%q", s), func(f string) bool { return strings.Contains(f, s) })
}

// key sends one key press by its tea name ("enter", "esc", "space", "D", "ctrl+l"...).
func (h *harness) key(names ...string) {
	for _, n := range names {
		h.tm.Send(keyMsg(n))
	}
}

func (h *harness) typeText(s string) { h.tm.Type(s) }

func keyMsg(n string) tea.KeyPressMsg { return tuitest.Key(n) }

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldentest.Assert(t, name, got)
}

var errBoom = errors.New("engine said no: disk full")
