package fleet

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

var benchNow = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func benchSandbox(i int) backends.Sandbox {
	name := fmt.Sprintf("inspect-task%03d-i%08x", i%500, i)
	sb := backends.Sandbox{ID: "docker:bench/" + name, Name: name, Backend: backends.KindDocker, Endpoint: "docker:bench",
		Created: benchNow.Add(-time.Duration(i) * time.Second), Task: fmt.Sprintf("task%03d", i%500), Inspect: true, Actionable: true}
	for j := range 3 {
		sb.Members = append(sb.Members, backends.Member{ID: strconv.Itoa(i*3 + j), Name: name + "-svc" + strconv.Itoa(j) + "-1",
			Service: "svc" + strconv.Itoa(j), State: "running", Running: true, Image: "busybox:test",
			Labels: map[string]string{"com.docker.compose.project": name, "com.docker.compose.service": "svc" + strconv.Itoa(j)}})
	}
	sb.Status = backends.DeriveStatus(sb.Members)
	return sb
}

// benchModel is a fleet screen at 120x40 holding n sandboxes, built through the same update
// path the app uses (a backend reset, computed off the UI goroutine, installed).
func benchModel(tb testing.TB, n int) Model {
	m := New(keymap.Default(), theme.Dark256())
	m.Now = func() time.Time { return benchNow }
	m.SetSize(120, 40)
	sbs := make([]backends.Sandbox, n)
	for i := range sbs {
		sbs[i] = benchSandbox(i)
	}
	ev := backends.Event{Type: backends.EventReset, Sandboxes: sbs}
	m = settle(m, m.ApplyUpdates([]supervisor.Update{{Backend: "docker:bench", Event: &ev}}))
	if m.Store().Len() != n {
		tb.Fatalf("store shows %d rows, want %d", m.Store().Len(), n)
	}
	return m
}

// settle runs a command chain synchronously (no timers are involved in compute results).
func settle(m Model, cmd tea.Cmd) Model {
	for cmd != nil {
		msg := cmd()
		if msg == nil {
			break
		}
		m, cmd = m.Update(msg)
	}
	return m
}

func p50(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Nanoseconds())
}

// BenchmarkRenderScale: the cost of one frame must not grow with the fleet (goal 10k/100 <= 1.2,
// p50 < 1 ms at 10k).
func BenchmarkRenderScale(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			m := benchModel(b, n)
			m.Select(m.Store().At(n / 2).SB.ID) // mid-fleet, so the window is not the first page
			ds := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t := time.Now()
				if len(m.render()) == 0 { // the frame itself, not the idle cache (BenchmarkIdleFrame)
					b.Fatal("empty frame")
				}
				ds = append(ds, time.Since(t))
			}
			b.ReportMetric(p50(ds), "p50-ns")
		})
	}
}

// BenchmarkFilterKeystroke10k: one keystroke's new filter to a new frame (Compute + Install +
// View) at 10k sandboxes (goal < 5 ms).
func BenchmarkFilterKeystroke10k(b *testing.B) {
	m := benchModel(b, 10_000)
	filters := []string{"task0", "task01", "task012", "!task0 backend=docker", "name~i0000"}
	ds := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		m = settle(m, m.SetFilter(filters[i%len(filters)]))
		_ = m.View()
		ds = append(ds, time.Since(t))
	}
	b.ReportMetric(p50(ds), "p50-ns")
}

// BenchmarkEvents1000PerSecond: at 1,000 events/s a 16 ms frame folds 16 events and renders
// once. One op is one such frame at 10k sandboxes; a frame is dropped if it costs > 16 ms.
func BenchmarkEvents1000PerSecond(b *testing.B) {
	const perFrame = 16
	m := benchModel(b, 10_000)
	sbs := make([]backends.Sandbox, 512)
	for i := range sbs {
		sbs[i] = benchSandbox(i * 19)
	}
	var worst time.Duration
	dropped := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		us := make([]supervisor.Update, perFrame)
		for j := range us {
			sb := sbs[(i*perFrame+j)%len(sbs)]
			if (i+j)%2 == 0 {
				sb.Status = backends.StatusPartial
			}
			ev := backends.Event{Type: backends.EventUpsert, Sandbox: sb}
			us[j] = supervisor.Update{Backend: "docker:bench", Event: &ev}
		}
		m = settle(m, m.ApplyUpdates(us))
		_ = m.View()
		d := time.Since(t)
		worst = max(worst, d)
		if d > 16*time.Millisecond {
			dropped++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perFrame), "ns/event")
	b.ReportMetric(float64(worst.Nanoseconds()), "worst-frame-ns")
	b.ReportMetric(float64(dropped), "dropped-frames")
}

// BenchmarkHeap10k reports the live heap after building a 10k-sandbox fleet screen.
func BenchmarkHeap10k(b *testing.B) {
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := benchModel(b, 10_000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "heap-MB")
		b.ReportMetric(float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc))/(1<<20), "fleet-MB")
		b.ReportMetric(float64(after.Sys)/(1<<20), "sys-MB")
		runtime.KeepAlive(m)
	}
}
