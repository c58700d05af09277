package tui

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
	"github.com/rangekeeper/rangekeeper/state"
)

// The live-evals range of BenchmarkLiveEvals200Samples: 4 evals (one sample buffer each) of 50
// running samples, each sample in a Kubernetes sandbox whose pod carries its inspectSampleUUID,
// beside 1,800 simulated releases no sample of this host runs in.
const (
	evalsBuffers       = 4
	evalsPerBuffer     = 50
	evalsSparePods     = 20 // per buffer: pods up already whose sample starts during the run
	evalsOtherRows     = 1800
	evalsEventsPerSec  = 50
	evalsStartsPerSec  = 2 // new samples a second (each completes the buffer's oldest, whose pod goes)
	evalsWindow        = 15 * time.Second
	evalsLinkDrainWait = 5 * time.Second
)

// BenchmarkLiveEvals200Samples runs the real program (teatest, a real supervisor over a fake
// Kubernetes backend and simfleet, a state file, 120x40, the workbench's FPS and 1 s tick) over
// 2,080 rows: the 200 pods of 200 running Inspect samples, 80 pods whose samples have not
// started yet, and 1,800 simulated releases churning one every 2 s. A writer goroutine plays the
// eval process on 4 real sample buffers (inspecttest, WAL): 50 events a second round the running
// samples, and 2 new samples a second (the pod was already up; the buffer's oldest sample
// completes and its pod is torn down, so 200 stay running).
//
// It runs the range twice, each for a 15 s window after the first frames and links settled:
// without an Inspect watcher (Options.Evals nil) and with a real inspectlive.Watcher (default
// 1 s poll, 2 s rescan) over the data directory. The writer runs in both, so the difference is
// the watcher and the workbench's linking. Metrics, <metric>-off and -on, and the difference:
//
//   - cpu-%core: the process's CPU time over the window, percent of one core;
//   - app-%core: the same less the writer goroutine's own thread CPU (it is locked to its
//     thread; SQLite here is pure Go) — the workbench's own figure; app-%core-delta is the
//     target (< 0.2); ui-%core the part spent in the program's Update and View calls (the UI
//     thread's CPU time);
//   - frame-us-p99, frame-cpu-us-p99: per View, that View and the Updates since the previous
//     one, wall clock and the UI thread's CPU time (the wall clock also counts the time the
//     poller or the writer held one of the cores); view-us-p99 the View calls alone; frames how
//     many (an idle workbench draws a few a second, so a p99 is near the window's worst frame;
//     frame-cpu-us-p50 is steadier; the evals' own messages add cheap frames, which pull the
//     on variant's percentiles down: ui-%core-delta is the figure they cannot hide behind)
//     (target: unchanged within noise);
//   - link-ms-p50, link-ms-p99 (evals on): from the commit of a new sample's samples row to the
//     Update that installs its row's link (target p99 < 2000), over links samples (~30).
//
// The targets are not asserted (benchmarks report, they do not time out); a new sample whose
// row never shows its link, or a writer that fell behind, fails the run. No network: files in a
// temporary directory and in-memory backends. One iteration takes ~45 s, the variants'
// order alternating from one to the next; on a shared machine compare several:
//
//	go test -run '^$' -bench BenchmarkLiveEvals200Samples -benchtime 1x -count 3 ./tui/
func BenchmarkLiveEvals200Samples(b *testing.B) {
	for range b.N {
		// Alternate which variant runs first, run to run (-count), so an order effect shows.
		var off, on liveEvalsResult
		if liveEvalsRuns++; liveEvalsRuns%2 == 1 {
			off, on = runLiveEvals(b, false), runLiveEvals(b, true)
		} else {
			on, off = runLiveEvals(b, true), runLiveEvals(b, false)
		}
		for _, m := range []struct {
			name    string
			off, on float64
			delta   bool
		}{
			{"cpu-%core", off.cpuPct, on.cpuPct, true},
			{"app-%core", off.appPct, on.appPct, true},
			{"ui-%core", off.uiPct, on.uiPct, true},
			{"writer-%core", off.writerPct, on.writerPct, false},
			{"frame-us-p99", us(off.frameP99), us(on.frameP99), true},
			{"frame-cpu-us-p99", us(off.frameCPUP99), us(on.frameCPUP99), true},
			{"frame-cpu-us-p50", us(off.frameCPUP50), us(on.frameCPUP50), true},
			{"view-us-p99", us(off.viewP99), us(on.viewP99), true},
			{"frames", float64(off.frames), float64(on.frames), false},
		} {
			b.ReportMetric(m.off, m.name+"-off")
			b.ReportMetric(m.on, m.name+"-on")
			if m.delta {
				b.ReportMetric(m.on-m.off, m.name+"-delta")
			}
		}
		b.ReportMetric(float64(on.linkP50.Milliseconds()), "link-ms-p50")
		b.ReportMetric(float64(on.linkP99.Milliseconds()), "link-ms-p99")
		b.ReportMetric(float64(on.links), "links")
		b.ReportMetric(float64(on.events), "events-on")
	}
}

// liveEvalsRuns counts BenchmarkLiveEvals200Samples's iterations in this process.
var liveEvalsRuns int

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// liveEvalsResult is one variant's window.
type liveEvalsResult struct {
	cpuPct, appPct, writerPct, uiPct float64
	frameP99, frameCPUP99, viewP99   time.Duration
	frameCPUP50                      time.Duration
	frames                           int
	linkP50, linkP99                 time.Duration
	links, events                    int
}

// evalsTimed wraps the program's model: it times each frame (a View and the Updates since the
// previous one: a per-call figure would be diluted by the cheap messages the evals add), tells
// when the fleet and the first links are in, and notes when a new sample's row shows its link.
type evalsTimed struct {
	*Model
	rows, linked int // the rows and links that make the program ready
	lat          *linkLatency

	ready       atomic.Bool
	mu          sync.Mutex
	upd, updCPU time.Duration   // the Updates since the last View
	frames      []time.Duration // per View: it and the Updates before it, wall clock
	cpu         []time.Duration // the same in the UI thread's CPU time
	views       []time.Duration // the View calls alone
}

func (t *evalsTimed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	start, c0 := time.Now(), threadCPU()
	_, cmd := t.Model.Update(msg)
	d, c := time.Since(start), threadCPU()-c0
	t.mu.Lock()
	t.upd += d
	if c >= 0 {
		t.updCPU += c
	}
	t.mu.Unlock()
	if lm, ok := msg.(linksMsg); ok {
		if !t.ready.Load() && t.fleet.Store().Total() >= t.rows && len(lm.links) >= t.linked {
			t.ready.Store(true)
		}
		t.lat.check(t.Model)
	}
	if t.linked == 0 && !t.ready.Load() && t.fleet.Store().Total() >= t.rows {
		t.ready.Store(true)
	}
	return t, cmd
}

// View closes a frame: this View and every Update since the last.
func (t *evalsTimed) View() tea.View {
	start, c0 := time.Now(), threadCPU()
	v := t.Model.View()
	d, c := time.Since(start), threadCPU()-c0
	t.mu.Lock()
	t.views = append(t.views, d)
	t.frames = append(t.frames, t.upd+d)
	if c >= 0 { // negative: the goroutine changed threads mid-call (rare); left out
		t.cpu = append(t.cpu, t.updCPU+c)
	}
	t.upd, t.updCPU = 0, 0
	t.mu.Unlock()
	return v
}

func (t *evalsTimed) reset() {
	t.mu.Lock()
	t.frames, t.cpu, t.views = nil, nil, nil
	t.mu.Unlock()
}

// linkLatency is the new samples waiting for their row's link: the writer adds one when its
// samples row is committed, the program's Update (check) takes it when the row shows the link.
type linkLatency struct {
	mu      sync.Mutex
	pending map[string]newSample // sandbox ID →
	got     []time.Duration
}

type newSample struct {
	id string
	at time.Time
}

func (l *linkLatency) add(sbID, sampleID string, at time.Time) {
	l.mu.Lock()
	l.pending[sbID] = newSample{sampleID, at}
	l.mu.Unlock()
}

// check runs on the Update goroutine, after a refresh was installed.
func (l *linkLatency) check(m *Model) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for sbID, p := range l.pending {
		if e := linkOf(m, sbID); e != nil && e.SampleID == p.id {
			l.got = append(l.got, now.Sub(p.at))
			delete(l.pending, sbID)
		}
	}
}

func (l *linkLatency) left() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// evalSample is a sample of one buffer and the pod it runs in.
type evalSample struct {
	id, uuid string
	pod      backends.Sandbox
}

func evalPod(k int, s int) evalSample {
	id := fmt.Sprint(s)
	uuid := fmt.Sprintf("b%d-s%04d-8c1e4f", k, s)
	pod := sandbox("k8s:evals", backends.KindKubernetes, fmt.Sprintf("agent-env-%d%07x", k, s*2654435761%(1<<28)), evalsTasks[k], 2, time.Hour)
	pod.Labels = map[string]string{"inspectSampleUUID": uuid}
	pod.Endpoint = "k8s:evals"
	return evalSample{id: id, uuid: uuid, pod: pod}
}

var evalsTasks = [evalsBuffers]string{"cybench", "intercode_ctf", "gdm_intercode_ctf", "cyse3_offensive"}

// evalsRange is the data directory, its writer and the pods.
type evalsRange struct {
	data, logs string
	dbs        [evalsBuffers]*it.DB
	running    [evalsBuffers][]evalSample
	next       [evalsBuffers]int // the next sample to start
	k8s        *fakeBackend
}

func newEvalsRange(b *testing.B) *evalsRange {
	r := &evalsRange{data: filepath.Join(b.TempDir(), "inspect_ai"), logs: b.TempDir(),
		k8s: &fakeBackend{name: "k8s:evals", kind: backends.KindKubernetes}}
	pid := os.Getpid()
	for k, task := range evalsTasks {
		tid := fmt.Sprintf("T%dx9Qp", k)
		r.dbs[k] = it.NewDB(b, it.BufferPath(r.data, it.LogName(task, tid), pid), true)
		start := it.StartJSON(task, "openai/gpt-test")
		start["eval"].(map[string]any)["task_id"] = tid
		it.WriteEval(b, filepath.Join(r.logs, it.LogName(task, tid)), true, it.EvalMember{Name: "_journal/start.json", Body: start})
		for s := range evalsPerBuffer + evalsSparePods {
			smp := evalPod(k, s)
			r.k8s.fleet = append(r.k8s.fleet, smp.pod)
			if s >= evalsPerBuffer {
				continue
			}
			r.running[k] = append(r.running[k], smp)
			if err := r.dbs[k].TryStartSample(smp.id, 1, smp.uuid); err != nil {
				b.Fatal(err)
			}
			if err := r.dbs[k].TryAddEvents(smp.id, 1, it.SampleInit(0), it.Model("m-"+smp.uuid, 1, 1200, false),
				it.SandboxExec(2, "bash --login -c 'ls /challenge'", 0, "flag.txt\nsrc"),
				it.ToolCall("t-"+smp.uuid, 3, "cat /challenge/src/main.c", true, "")); err != nil {
				b.Fatal(err)
			}
		}
		r.next[k] = evalsPerBuffer
	}
	return r
}

// write is the eval process: evalsEventsPerSec events round the running samples, and
// evalsStartsPerSec new samples, until stop. It runs locked to its thread and adds that thread's
// CPU to cpu (nanoseconds).
func (r *evalsRange) write(stop <-chan struct{}, lat *linkLatency, cpu, events *atomic.Int64, errs chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tick := time.NewTicker(time.Second / evalsEventsPerSec)
	defer tick.Stop()
	startEvery := evalsEventsPerSec / evalsStartsPerSec
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		c0 := threadCPU()
		k := i % evalsBuffers
		smp := r.running[k][(i/evalsBuffers)%len(r.running[k])]
		var ev it.Event
		switch i % 5 {
		case 0:
			ev = it.Model(fmt.Sprintf("m%d", i), 10+i/50, 1500+i, false)
		case 1:
			ev = it.ToolCall(fmt.Sprintf("t%d", i), 10+i/50, "grep -r flag /challenge", false, "")
		default:
			ev = it.SandboxExec(10+i/50, "bash --login -c 'grep -r flag /challenge'", 0, "no match")
		}
		err := r.dbs[k].TryAddEvents(smp.id, 1, ev)
		if err == nil {
			events.Add(1)
		}
		if err == nil && i%startEvery == 0 && r.next[k] < evalsPerBuffer+evalsSparePods {
			err = r.startNext(k, lat)
		}
		cpu.Add(int64(threadCPU() - c0))
		if err != nil {
			errs <- err
			return
		}
	}
}

// startNext starts buffer k's next sample (its pod is up), completes the oldest and removes its
// pod.
func (r *evalsRange) startNext(k int, lat *linkLatency) error {
	db := r.dbs[k]
	smp := evalPod(k, r.next[k])
	r.next[k]++
	if err := db.TryStartSample(smp.id, 1, smp.uuid); err != nil {
		return err
	}
	lat.add(smp.pod.ID, smp.id, time.Now())
	old := r.running[k][0]
	r.running[k] = append(r.running[k][1:], smp)
	if err := db.TryWrite(func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE samples SET data = ? WHERE id = ? AND epoch = 1`,
			it.Summary(old.id, 1, old.uuid, map[string]any{"completed": true}), old.id)
		return err
	}); err != nil {
		return err
	}
	r.k8s.mu.Lock()
	emit := r.k8s.emit
	r.k8s.mu.Unlock()
	emit(backends.Event{Type: backends.EventRemove, ID: old.pod.ID})
	return nil
}

func runLiveEvals(b *testing.B, on bool) liveEvalsResult {
	b.StopTimer()
	r := newEvalsRange(b)
	sim := simfleet.New("simulated", backends.KindKubernetes, evalsOtherRows, 2*time.Second)
	sup := supervisor.New([]backends.Backend{r.k8s, sim}, supervisor.Backoff{Min: 50 * time.Millisecond, Max: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	defer func() { cancel(); wait() }()
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	sup.WaitReady(rctx)
	rcancel()
	db, err := state.Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()

	var w *inspectlive.Watcher
	linked := 0
	if on {
		w = inspectlive.New(inspectlive.Config{DataDirs: []string{r.data}, LogDirs: []string{r.logs}})
		w.Start()
		defer w.Close()
		linked = evalsBuffers * evalsPerBuffer
	}
	lat := &linkLatency{pending: map[string]newSample{}}
	rows := evalsBuffers*(evalsPerBuffer+evalsSparePods) + evalsOtherRows
	m := New(Options{Supervisor: sup, State: db, NoColor: true, Tick: time.Second, StatsEvery: -1,
		BackgroundWait: 20 * time.Millisecond, Evals: w})
	tm := &evalsTimed{Model: m, rows: rows, linked: linked, lat: lat}
	prog := teatest.NewTestModel(b, tm, teatest.WithInitialTermSize(120, 40), teatest.WithProgramOptions(tea.WithFPS(FPS)))
	defer func() {
		_ = prog.Quit()
		prog.WaitFinished(b, teatest.WithFinalTimeout(5*time.Second))
	}()
	for deadline := time.Now().Add(20 * time.Second); !tm.ready.Load(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("evals=%v: the program never showed %d rows and %d links", on, rows, linked)
		}
	}

	// The writer starts a second before the window: the window sees its steady state.
	stop, done, errs := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var writerCPU, events atomic.Int64
	go func() { defer close(done); r.write(stop, lat, &writerCPU, &events, errs) }()
	time.Sleep(time.Second)
	tm.reset()
	lat.mu.Lock()
	lat.got = nil
	lat.mu.Unlock()
	runtime.GC()
	b.StartTimer()
	u0, w0, e0, begin := rusage(), writerCPU.Load(), events.Load(), time.Now()
	select {
	case err := <-errs:
		b.Fatalf("the eval writer: %v", err)
	case <-time.After(evalsWindow):
	}
	cpu, wcpu, wall := rusage()-u0, time.Duration(writerCPU.Load()-w0), time.Since(begin)
	nEvents := int(events.Load() - e0)
	b.StopTimer()
	close(stop)
	<-done

	res := liveEvalsResult{cpuPct: 100 * cpu.Seconds() / wall.Seconds(), appPct: 100 * (cpu - wcpu).Seconds() / wall.Seconds(),
		writerPct: 100 * wcpu.Seconds() / wall.Seconds(), events: nEvents}
	tm.mu.Lock()
	res.frameP99, res.frameCPUP99, res.viewP99 = p99(tm.frames), p99(tm.cpu), p99(tm.views)
	res.frames = len(tm.frames)
	var ui time.Duration
	for _, c := range tm.cpu {
		ui += c
	}
	res.uiPct = 100 * ui.Seconds() / wall.Seconds()
	if len(tm.cpu) > 0 {
		res.frameCPUP50 = pctl(tm.cpu, 0.50)
	}
	tm.mu.Unlock()
	if on {
		for deadline := time.Now().Add(evalsLinkDrainWait); lat.left() > 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		lat.mu.Lock()
		left, got := len(lat.pending), append([]time.Duration(nil), lat.got...)
		lat.mu.Unlock()
		if left > 0 {
			b.Errorf("%d new samples' rows never showed their link", left)
		}
		if len(got) == 0 {
			b.Fatal("no new sample was linked")
		}
		res.links, res.linkP50, res.linkP99 = len(got), pctl(got, 0.50), pctl(got, 0.99)
	}
	if want := int(evalsWindow.Seconds()) * evalsEventsPerSec * 9 / 10; nEvents < want {
		b.Errorf("evals=%v: the writer added %d events in the window, want ~%d", on, nEvents, int(evalsWindow.Seconds())*evalsEventsPerSec)
	}
	return res
}

// pctl is the q-quantile (nearest rank).
func pctl(ds []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(math.Ceil(q*float64(len(s))))-1]
}
