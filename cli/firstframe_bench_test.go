package cli

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/state"
)

// BenchmarkFirstFrameFromCache10k starts the real binary (built as `make build` does) in a
// pseudo-terminal on a state file that caches 10,000 Kubernetes sandboxes, as an operator's
// restart finds it, and times from exec to the first frame and to the first frame that shows
// the cached rows (their count in the footer). Its one backend points at a closed loopback
// port, so only the start-up itself is measured (the target: the cached rows within 100 ms of
// exec). It reports the median and 95th percentile over b.N starts.
//
//	go test -run '^$' -bench FirstFrameFromCache10k -benchtime 10x ./cli/
func BenchmarkFirstFrameFromCache10k(b *testing.B) {
	bin, args := firstFrameRig(b, 10_000)
	var first, cached []time.Duration
	b.ResetTimer()
	for range b.N {
		f, c := timeStart(b, bin, args...)
		first, cached = append(first, f), append(cached, c)
	}
	reportQuantiles(b, "first-frame", first)
	reportQuantiles(b, "cached-rows", cached)
}

// firstFrameRig builds the binary as `make build` does and a config and state file whose cache
// holds n sandboxes; args run the workbench on them.
func firstFrameRig(b *testing.B, n int) (bin string, args []string) {
	b.Helper()
	dir := b.TempDir()
	bin = filepath.Join(dir, "rangekeeper")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "../cmd/rangekeeper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "config.yaml")
	// A Docker endpoint nobody listens on: the backend fails at once, the cache stays on screen.
	if err := os.WriteFile(cfg, []byte("theme: auto\ndocker:\n  - name: lab\n    host: tcp://127.0.0.1:1\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	statePath := filepath.Join(dir, "state.db")
	seedInventory(b, statePath, n)
	return bin, []string{"--config", cfg, "--state", statePath}
}

// BenchmarkFirstFrameUnderTmux10k is the same start inside a 200x50 tmux session, the terminal
// the end-to-end tests and many operators use: from exec of `tmux new-session` to the cached
// rows in its pane, polled every 2 ms. tmux's own start and its redraw are in the figure.
func BenchmarkFirstFrameUnderTmux10k(b *testing.B) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatalf("tmux required in CI: %v", err)
		}
		b.Skipf("no tmux: %v", err)
	}
	bin, args := firstFrameRig(b, 10_000)
	socket := filepath.Join(b.TempDir(), "tmux.sock")
	defer exec.Command(tmux, "-S", socket, "kill-server").Run()
	// The operator's tmux server is running already: keep one up, or each kill-session of the
	// last session would stop the server under the next new-session.
	if out, err := exec.Command(tmux, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep", "3600").CombinedOutput(); err != nil {
		b.Fatalf("tmux: %v\n%s", err, out)
	}
	var cached []time.Duration
	for i := range b.N {
		home := b.TempDir()
		cmd := append([]string{"-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", fmt.Sprint("rk", i), "-x", "200", "-y", "50",
			"env", "HOME=" + home, "TERM=tmux-256color", bin}, args...)
		start := time.Now()
		if out, err := exec.Command(tmux, cmd...).CombinedOutput(); err != nil {
			b.Fatalf("tmux new-session: %v\n%s", err, out)
		}
		for {
			out, _ := exec.Command(tmux, "-S", socket, "capture-pane", "-p", "-t", fmt.Sprint("rk", i)).Output()
			if bytes.Contains(out, []byte("10000")) || bytes.Contains(out, []byte("10,000")) {
				cached = append(cached, time.Since(start))
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatalf("no cached rows in tmux within 30 s:\n%s", out)
			}
			time.Sleep(2 * time.Millisecond)
		}
		_ = exec.Command(tmux, "-S", socket, "kill-session", "-t", fmt.Sprint("rk", i)).Run()
	}
	reportQuantiles(b, "cached-rows", cached)
}

// BenchmarkFirstFrameFloor times, in the same pseudo-terminal harness, a shell that prints what
// the workbench's first frame and cached rows are recognised by: the cost of exec, the
// pseudo-terminal and the harness itself, which no start-up can beat.
func BenchmarkFirstFrameFloor(b *testing.B) {
	var first, cached []time.Duration
	for range b.N {
		f, c := timeStart(b, "/bin/sh", "-c", `stty raw -echo; printf 'sandboxes 10000'; head -c 1 >/dev/null`)
		first, cached = append(first, f), append(cached, c)
	}
	reportQuantiles(b, "first-frame", first)
	reportQuantiles(b, "cached-rows", cached)
}

// reportQuantiles reports the median and the 95th percentile of ds in milliseconds.
func reportQuantiles(b *testing.B, name string, ds []time.Duration) {
	b.ReportMetric(quantile(ds, 0.5).Seconds()*1000, "ms-"+name+"-p50")
	b.ReportMetric(quantile(ds, 0.95).Seconds()*1000, "ms-"+name+"-p95")
}

// seedInventory writes an inventory cache of n simulated Kubernetes sandboxes, each with the 34
// posture findings an agent-env release of two services has.
func seedInventory(b *testing.B, path string, n int) {
	b.Helper()
	sim := simfleet.New("simulated", backends.KindKubernetes, n, time.Hour)
	db, err := state.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sbs := make([]backends.Sandbox, n)
	for i := range sbs {
		sbs[i] = sim.Sandbox(i, 0)
		sbs[i].Findings = releaseFindings(sbs[i].Name)
	}
	if err := db.SaveInventory(state.InventoryRecord{Backend: sim.Name(), Sandboxes: sbs}); err != nil {
		b.Fatal(err)
	}
}

// timeStart runs the binary in a 200x50 pseudo-terminal until its screen shows the cached rows,
// then quits it with q: the times from exec to its first output and to the cached rows.
func timeStart(b *testing.B, bin string, args ...string) (first, cached time.Duration) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	home := b.TempDir()
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "TERM=xterm-256color", "COLORTERM=truecolor", "LANG=C.UTF-8"}
	start := time.Now()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		b.Fatal(err)
	}
	defer tty.Close()
	var (
		mu          sync.Mutex
		out         bytes.Buffer
		frame, rows time.Duration // 0 until seen
	)
	seen := make(chan struct{}) // closed once both are (and then nil)
	both := seen
	go func() {
		buf := make([]byte, 64<<10)
		for {
			k, err := tty.Read(buf)
			at := time.Since(start)
			mu.Lock()
			out.Write(buf[:k])
			// The first frame draws the title line; the cached rows show their count in it.
			if frame == 0 && bytes.Contains(out.Bytes(), []byte("sandboxes")) {
				frame = at
			}
			if rows == 0 && (bytes.Contains(out.Bytes(), []byte("10000")) || bytes.Contains(out.Bytes(), []byte("10,000"))) {
				rows = at
			}
			if frame > 0 && rows > 0 && seen != nil {
				close(seen)
				seen = nil
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-both:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		b.Fatalf("no first frame with the cached rows within 30 s; output:\n%q", out.String())
	}
	mu.Lock()
	first, cached = frame, rows
	mu.Unlock()
	_, _ = tty.Write([]byte("q"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		b.Fatal("the workbench did not quit within 20 s of q")
	}
	return first, cached
}

// quantile is the q-th quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
