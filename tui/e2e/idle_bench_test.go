package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// BenchmarkIdleWorkbench runs the real binary under tmux on the real engine, waits for its first
// table, and reports what it costs while nobody touches it: CPU (% of a core, from the kernel's
// per-thread run time) and wake-ups a second (voluntary context switches of all its threads).
// Every poll and ticker of the program shows here, the Go runtime's included (the
// alert poll's stat every second, the watch's every 2 s and the runtime's GOMAXPROCS re-read
// made 26-35 wake-ups/s and 0.2 % of a core on an empty fleet; notifications leave about 1/s).
// The binary is the race build the package's tests use, so %cpu reads high; wake-ups do not.
//
//	go test -run '^$' -bench IdleWorkbench -benchtime 3x ./tui/e2e/
func BenchmarkIdleWorkbench(b *testing.B) {
	const window = 10 * time.Second
	tmux := need(b)
	dockertest.Engine(b)
	bin := buildWorkbench(b)
	dir := b.TempDir()
	p := startPane(b, tmux, "rk-idle-"+dockertest.RunID, 160, 40, "rangekeeper", bin+" --state "+stateIn(dir),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	deadline := time.Now().Add(time.Minute)
	for s := p.capture(); !strings.Contains(s, "[ok] docker"); s = p.capture() {
		if time.Now().After(deadline) {
			b.Fatalf("no healthy Docker backend on screen:\n%s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	pid := childPID(b, tmux, p.socket)
	time.Sleep(2 * time.Second) // the first frames and the background queries settle
	b.ResetTimer()
	var cpu time.Duration
	var wakes int64
	for range b.N {
		c0, w0 := threadTimes(b, pid)
		time.Sleep(window)
		c1, w1 := threadTimes(b, pid)
		cpu += c1 - c0
		wakes += w1 - w0
	}
	secs := float64(b.N) * window.Seconds()
	b.ReportMetric(100*cpu.Seconds()/secs, "%cpu")
	b.ReportMetric(float64(wakes)/secs, "wakeups/s")
}

// childPID is the pid of the program the pane's shell runs.
func childPID(b *testing.B, tmux, socket string) int {
	b.Helper()
	out, err := exec.Command(tmux, "-L", socket, "display-message", "-p", "-t", "rk", "#{pane_pid}").Output()
	if err != nil {
		b.Fatalf("pane pid: %v", err)
	}
	shell := strings.TrimSpace(string(out))
	kids, err := os.ReadFile("/proc/" + shell + "/task/" + shell + "/children")
	if err != nil {
		b.Fatalf("children of the pane's shell: %v", err)
	}
	f := strings.Fields(string(kids))
	if len(f) != 1 {
		b.Fatalf("the pane's shell runs %q, want one program", kids)
	}
	pid, _ := strconv.Atoi(f[0])
	return pid
}

// threadTimes sums, over the process's threads, the time run on a CPU (schedstat, ns) and the
// voluntary context switches (each one a sleep the thread was later woken from).
func threadTimes(b *testing.B, pid int) (time.Duration, int64) {
	b.Helper()
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*")
	if err != nil || len(tasks) == 0 {
		b.Fatalf("threads of %d: %v", pid, err)
	}
	var run time.Duration
	var wakes int64
	for _, task := range tasks {
		if raw, err := os.ReadFile(task + "/schedstat"); err == nil {
			if f := strings.Fields(string(raw)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				run += time.Duration(ns)
			}
		}
		raw, err := os.ReadFile(task + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				wakes += n
			}
		}
	}
	return run, wakes
}
