package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/moby/moby/api/types/container"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/logs"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// BenchmarkDockerLogFlood: a real member (our static flood binary) prints 1,000,000 lines on both
// streams at up to 100,000 a second (the engine's logging pushes back when it cannot keep up)
// while the log screen follows it from the engine's log stream, run the way the program runs it
// (one loop: batches and keys in arrival order, Update then View), until every line arrived. It
// reports key-to-frame p50/p99 (goal p99 < 50 ms), the rate that reached the screen, the lines
// held (at most the ring), the heap after a GC; search must find the needle planted mid-stream
// while it is held. Run with -benchtime=1x.
func BenchmarkDockerLogFlood(b *testing.B) {
	const rate, secs, ringSize = 100_000, 10, 10_000
	cli := dockertest.Engine(b)
	dir := b.TempDir()
	bin := filepath.Join(dir, "flood")
	build := exec.Command("go", "build", "-o", bin, "./testdata/flood")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build flood: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		b.Fatal(err)
	}
	img := "rangekeeper-test/flood:" + dockertest.RunID
	if err := dockertest.BuildImage(context.Background(), cli, img, dockertest.Labels(nil), map[string][]byte{"/flood": data}, nil); err != nil {
		b.Fatal(err)
	}
	project := "inspect-flood-i" + dockertest.RunID
	dockertest.Project(b, project)
	// No log rotation for this member: the engine's json-file follow does not survive a rotation
	// on this engine (20.10), and this machine's daemon rotates at 10 MB.
	dockertest.StartService(b, project, project+"_default", img, dockertest.Service{Name: "default", Cmd: []string{"/flood", "100000", "10"},
		HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode(project + "_default"),
			LogConfig: container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "500m", "max-file": "1"}}}})
	be, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		b.Fatal(err)
	}
	id := be.SandboxID(project)

	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 160, Height: 50}
	m := logs.New(logs.Options{Title: "flood", Lines: ringSize, Source: func(ctx context.Context) (backends.LogStream, error) {
		return be.Logs(ctx, id, backends.LogOptions{Follow: true, Tail: -1})
	}})
	defer m.Close()
	type queued struct {
		msg tea.Msg
		at  time.Time
		key bool
	}
	msgs := make(chan queued, 256)
	run := func(cmd tea.Cmd) {
		if cmd != nil {
			go func() {
				if msg := cmd(); msg != nil {
					msgs <- queued{msg: msg, at: time.Now()}
				}
			}()
		}
	}
	b.ResetTimer()
	start := time.Now()
	run(m.Open(c))
	keys := []string{"k", "j", "T", "w", "T", "w", "pgup", "G"}
	var lat []time.Duration
	var maxHeld int
	nextKey := time.Now().Add(10 * time.Millisecond)
	found := false
	for i := 0; m.Ring().Total() < rate*secs && time.Since(start) < 120*time.Second; {
		var q queued
		select {
		case q = <-msgs:
		case <-time.After(time.Until(nextKey)):
			q = queued{msg: tuitest.Key(keys[i%len(keys)]), at: time.Now(), key: true}
			i++
			nextKey = time.Now().Add(10 * time.Millisecond)
		}
		run(m.Update(c, q.msg))
		_ = m.View(c)
		if q.key {
			lat = append(lat, time.Since(q.at))
		}
		maxHeld = max(maxHeld, m.Ring().Len())
		if !q.key && !found && m.Ring().Total() > rate*secs/2 { // search while the needle is held
			found = m.Ring().Find("needle-planted-mid-stream", 0, true) >= 0
		}
	}
	b.StopTimer()
	if maxHeld > ringSize {
		b.Fatalf("ring held %d lines, bound %d", maxHeld, ringSize)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(m.Ring().Total())/time.Since(start).Seconds(), "lines/s")
	b.ReportMetric(float64(m.Ring().Total()), "lines")
	b.ReportMetric(float64(maxHeld), "held")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	if !found {
		b.Errorf("search never found the needle planted mid-stream (%d lines taken)", m.Ring().Total())
	}
	if pct(0.99) >= 50 {
		b.Errorf("key-to-frame p99 %.1f ms, goal < 50 ms", pct(0.99))
	}
}
