package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"golang.org/x/sys/unix"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// timed wraps the program's model and records how long each Update and View takes, and when
// each alert reaches the workbench (the watchMsg carrying it).
type timed struct {
	*Model
	mu      sync.Mutex
	frames  []time.Duration
	cpu     []time.Duration // the same work in the calling thread's CPU time
	latency []time.Duration
	seen    map[uint64]bool
}

func (t *timed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	start, c0 := time.Now(), threadCPU()
	_, cmd := t.Model.Update(msg)
	d, c := time.Since(start), threadCPU()-c0
	t.mu.Lock()
	t.frames = append(t.frames, d)
	t.addCPU(c)
	if w, ok := msg.(watchMsg); ok {
		for _, a := range w.open {
			if t.seen[a.ID] {
				continue
			}
			t.seen[a.ID] = true
			if _, at, ok := strings.Cut(a.After, "emitted="); ok {
				n, _ := strconv.ParseInt(strings.TrimRight(at, ")"), 10, 64)
				t.latency = append(t.latency, start.Sub(time.Unix(0, n)))
			}
		}
	}
	t.mu.Unlock()
	return t, cmd
}

func (t *timed) View() tea.View {
	start, c0 := time.Now(), threadCPU()
	v := t.Model.View()
	d, c := time.Since(start), threadCPU()-c0
	t.mu.Lock()
	t.frames = append(t.frames, d)
	t.addCPU(c)
	t.mu.Unlock()
	return v
}

// addCPU keeps a call's thread CPU time; a negative one (the goroutine moved to another thread
// mid-call, rare) is left out. t.mu held.
func (t *timed) addCPU(c time.Duration) {
	if c >= 0 {
		t.cpu = append(t.cpu, c)
	}
}

// threadCPU is the calling thread's CPU time: unlike the wall clock it does not count the
// time another goroutine (the watch's) held the core, so it shows whether the UI's own work
// changed.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)*99/100]
}

// BenchmarkDrift1kFleet100PerSecond runs the real program over a real supervisor and state file
// with 1,000 sandboxes while 100 posture-changing events a second arrive (each a new HIGH
// finding on a different sandbox), with and without the containment watch. It reports the p99
// of the program's Update/View work per message (frame-us-p99: the watch must not change it)
// and the same in the UI thread's CPU time (frame-cpu-us-p99: the wall clock also counts the
// time the watch's goroutine held one of the two cores), and, with the watch, the p99 from an event's emission to its alert reaching the workbench
// model (alert-ms-p99, goal < 2000). Each iteration is 3 s of events; run with -benchtime=1x.
func BenchmarkDrift1kFleet100PerSecond(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("watch=%v", on), func(b *testing.B) {
			d := &fakeBackend{name: "docker:test", kind: backends.KindDocker}
			for i := range 1000 {
				d.fleet = append(d.fleet, sandbox("docker:test", backends.KindDocker, fmt.Sprintf("inspect-drift-i%06d", i), "drift", 2, time.Hour))
			}
			sup := supervisor.New([]backends.Backend{d}, supervisor.Backoff{Min: 50 * time.Millisecond, Max: time.Second})
			ctx, cancel := context.WithCancel(context.Background())
			wait := sup.Start(ctx)
			defer func() { cancel(); wait() }()
			sup.WaitReady(ctx)
			db, err := state.Open(filepath.Join(b.TempDir(), "state.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			m := New(Options{Supervisor: sup, State: db, NoColor: true, Tick: time.Second, StatsEvery: -1, BackgroundWait: 20 * time.Millisecond,
				Watch: startWatch(b, on, ctx, sup, db)})
			tm := &timed{Model: m, seen: map[uint64]bool{}}
			prog := teatest.NewTestModel(b, tm, teatest.WithInitialTermSize(120, 40), teatest.WithProgramOptions(tea.WithFPS(FPS)))
			defer func() { _ = prog.Quit() }()
			time.Sleep(time.Second) // first frames, baselines
			tm.mu.Lock()
			tm.frames, tm.cpu = nil, nil
			tm.mu.Unlock()
			b.ResetTimer()
			n := 0
			for range b.N {
				tick := time.NewTicker(10 * time.Millisecond)
				for range 300 {
					<-tick.C
					sb := d.fleet[(n*7)%len(d.fleet)]
					sb.Findings = append(append([]backends.Finding(nil), sb.Findings...), backends.Finding{RuleID: "CMP-N03", Severity: catalog.SeverityHigh,
						Member: sb.Members[0].Name, Message: "joined a non-internal network", Evidence: fmt.Sprintf("net%d (emitted=%d)", n, time.Now().UnixNano())})
					d.fleet[(n*7)%len(d.fleet)] = sb
					d.mu.Lock()
					emit := d.emit
					d.mu.Unlock()
					emit(backends.Event{Type: backends.EventUpsert, Sandbox: sb})
					n++
				}
				tick.Stop()
			}
			time.Sleep(2500 * time.Millisecond) // let the last alerts arrive
			b.StopTimer()
			tm.mu.Lock()
			defer tm.mu.Unlock()
			b.ReportMetric(float64(p99(tm.frames).Microseconds()), "frame-us-p99")
			b.ReportMetric(float64(p99(tm.cpu).Microseconds()), "frame-cpu-us-p99")
			if on {
				b.ReportMetric(float64(p99(tm.latency).Milliseconds()), "alert-ms-p99")
				b.ReportMetric(float64(len(tm.latency)), "alerts")
				if len(tm.latency) < n*9/10 {
					b.Errorf("%d of %d alerts reached the workbench", len(tm.latency), n)
				}
			}
		})
	}
}
