package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
)

// rawRun posts body to the daemon's /v1/run and returns the response.
func rawRun(t *testing.T, sock string, body []byte) *http.Response {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	res, err := hc.Post("http://rk/v1/run", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSocketRefusesFlagsItCannotApply: global flags that would not hold inside the daemon are
// refused with exit 2 and the reason, before anything runs; --state given to the CLI only
// chooses the socket and is not sent; a flag after "--" belongs to the sandbox's command.
func TestSocketRefusesFlagsItCannotApply(t *testing.T) {
	r := newTrustRig(t)
	r.start(t)
	c := sockapi.NewClient(socketPath(r.statePath))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--state", "/elsewhere/state.db", "journal"}, "--state cannot apply through the daemon"},
		{[]string{"--state=/elsewhere/state.db", "journal"}, "--state cannot apply"},
		{[]string{"--config", "/elsewhere/config.yaml", "ls"}, "--config cannot apply through the daemon"},
		{[]string{"--standalone", "journal"}, "--standalone cannot apply"},
		{[]string{"--read-only", "teardown", "web", "--yes"}, "--read-only cannot apply to teardown"},
		{[]string{"snapshot", "--read-only", "web"}, "--read-only cannot apply to snapshot"},
	} {
		var out, errOut bytes.Buffer
		code, err := c.Run(context.Background(), tc.args, &out, &errOut)
		if err != nil || code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, %v, %q; want exit 2 saying %q", tc.args, code, err, errOut.String(), tc.want)
		}
	}
	// --read-only is true of journal already: accepted.
	var out, errOut bytes.Buffer
	if code, err := c.Run(context.Background(), []string{"--read-only", "journal"}, &out, &errOut); err != nil || code != 0 {
		t.Errorf("--read-only journal: exit %d, %v, %s", code, err, errOut.String())
	}
	// The CLI's own --state is not sent.
	if code, routed := runRemote([]string{"--state", r.statePath, "journal"}, strings.NewReader(""), &out, &errOut); !routed || code != 0 {
		t.Errorf("journal --state through the CLI: routed %v, exit %d: %s", routed, code, errOut.String())
	}
	// After "--", flags are the sandbox command's: not read as the CLI's.
	errOut.Reset()
	c.Run(context.Background(), []string{"exec", "no-such-sandbox", "--", "env", "--config", "x", "--state", "y"}, &out, &errOut)
	if strings.Contains(errOut.String(), "cannot apply") {
		t.Errorf("a flag after -- was refused as the CLI's: %s", errOut.String())
	}
}

// TestSocketFramesAreTheDocumentedOnes reads /v1/run's raw answer: every frame is one of
// {"out": line}, {"err": line}, then {"exit": N} last; each out frame is one whole line of the
// output (no empty frame, no frame per table cell). An oversized body is answered 413.
func TestSocketFramesAreTheDocumentedOnes(t *testing.T) {
	r := newTrustRig(t)
	stderr := r.start(t)
	sock := socketPath(r.statePath)
	// Three reloads of the operators file are three journal rows, for a table of several.
	for i := 1; i <= 3; i++ {
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		for start := time.Now(); strings.Count(stderr.String(), "operators reloaded") < i; time.Sleep(20 * time.Millisecond) {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("no reload: %s", stderr.String())
			}
		}
	}
	for _, args := range [][]string{{"journal"}, {"ls"}, {"journal", "-o", "json"}, {"snapshot", "no-such-sandbox"}} {
		body, _ := json.Marshal(map[string]any{"args": args})
		res := rawRun(t, sock, body)
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("%q: %s %s", args, res.Status, res.Header.Get("Content-Type"))
		}
		lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		var text strings.Builder
		for i, l := range lines {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &m); err != nil || len(m) != 1 {
				t.Fatalf("%q: frame %d %q: want exactly one of out, err, exit", args, i, l)
			}
			last := i == len(lines)-1
			for k, v := range m {
				switch {
				case k == "exit":
					if !last {
						t.Errorf("%q: exit frame %d is not the last of %d", args, i, len(lines))
					}
					if _, err := strconv.Atoi(string(v)); err != nil {
						t.Errorf("%q: exit %s", args, v)
					}
				case k == "out" || k == "err":
					var s string
					json.Unmarshal(v, &s)
					if last || s == "" {
						t.Errorf("%q: frame %d %q", args, i, l)
					}
					// A line per frame; only a stream's last frame before exit may lack its newline.
					if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
						if next := lines[i+1]; !strings.HasPrefix(next, `{"exit"`) && !strings.HasPrefix(next, `{"err"`) {
							t.Errorf("%q: frame %d is not one line: %q", args, i, s)
						}
					}
					if k == "out" {
						text.WriteString(s)
					}
				default:
					t.Errorf("%q: frame %d has %q", args, i, k)
				}
			}
		}
		if args[0] == "journal" && len(args) == 1 && strings.Count(text.String(), "\n") < 4 {
			t.Errorf("journal table: %d lines in %d frames; want the header and three rows", strings.Count(text.String(), "\n"), len(lines))
		}
		t.Logf("%q: %d frames, %d bytes", args, len(lines), len(raw))
	}

	big := append([]byte(`{"args": ["ls", "`), bytes.Repeat([]byte("a"), 2<<20)...)
	big = append(big, `"]}`...)
	res := rawRun(t, sock, big)
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "too large") {
		t.Errorf("a 2 MiB body: %s %q; want 413 too large", res.Status, msg)
	}
}

// rssKB is the resident set of process pid.
func rssKB(t *testing.T, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// serveProcess runs `rangekeeper serve` as its own process (built without the race detector,
// so its memory is the daemon's as shipped) until the test ends; it returns its pid.
func (r *trustRig) serveProcess(t *testing.T) int {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rangekeeper")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/rangekeeper").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--state", r.statePath, "serve", "--listen", "127.0.0.1:0", "--operators", r.ops)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(r.dir, "config"), "RANGEKEEPER_LOCK_DIR="+filepath.Join(r.dir, "locks"))
	var stderr syncBuffer
	stderr.b = &bytes.Buffer{}
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	for start := time.Now(); !sockapi.Available(socketPath(r.statePath)); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the daemon never opened its socket: %s", stderr.String())
		}
	}
	return cmd.Process.Pid
}

// TestSocketBurstIsBounded sends 2,000 `ls -o json` at once through the CLI's path: each is
// answered, the run (exit 0) or busy (exit 75, nothing ran) within the test's bound, none
// hangs, and the memory goes back near its level before.
func TestSocketBurstIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a burst of 2,000 requests")
	}
	r := newTrustRig(t)
	pid := r.serveProcess(t)
	args := []string{"--state", r.statePath, "ls", "-o", "json"}
	var out, errOut bytes.Buffer
	if code, routed := runRemote(args, strings.NewReader(""), &out, &errOut); !routed || code != 0 {
		t.Fatalf("ls -o json: routed %v, exit %d: %s", routed, code, errOut.String())
	}
	time.Sleep(time.Second)
	before := rssKB(t, pid)

	const n = 2000
	var (
		mu        sync.Mutex
		codes     = map[int]int{}
		latencies []time.Duration
		peak      int
		busyMsg   string
	)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if k := rssKB(t, pid); k > peak {
					mu.Lock()
					peak = max(peak, k)
					mu.Unlock()
				}
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var o, e bytes.Buffer
			t0 := time.Now()
			code, routed := runRemote(args, strings.NewReader(""), &o, &e)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if !routed {
				code = -2 // ran here, without the daemon: never right while it serves
			}
			codes[code]++
			latencies = append(latencies, d)
			if code == sockapi.ExitBusy && busyMsg == "" {
				busyMsg = e.String()
			}
			if code == 0 && !json.Valid(o.Bytes()) {
				if codes[-1] == 0 {
					t.Logf("not JSON: %q (stderr %q)", o.String(), e.String())
				}
				codes[-1]++
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatalf("after 2 minutes %d of %d requests were answered", len(latencies), n)
	}
	took := time.Since(start)
	close(stop)
	time.Sleep(2 * time.Second) // the release after a burst waits for half a second idle
	after := rssKB(t, pid)

	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	t.Logf("%d concurrent ls -o json in %v: %d ran, %d busy; latency p50 %v p99 %v max %v",
		n, took.Round(time.Millisecond), codes[0], codes[sockapi.ExitBusy], pct(.5), pct(.99), pct(1))
	t.Logf("RSS of the daemon: before %d MB, peak %d MB, after %d MB", before/1024, peak/1024, after/1024)
	if codes[0]+codes[sockapi.ExitBusy] != n || codes[-1] > 0 {
		t.Errorf("exit codes %v: want each request run (0, valid JSON) or busy (%d)", codes, sockapi.ExitBusy)
	}
	if codes[sockapi.ExitBusy] == 0 || codes[0] == 0 {
		t.Errorf("exit codes %v: want some run and some busy at the per-user limit", codes)
	}
	if !strings.Contains(busyMsg, "busy") || !strings.Contains(busyMsg, "try again") {
		t.Errorf("busy answer %q", busyMsg)
	}
	if after > before+32*1024 {
		t.Errorf("RSS %d MB after the burst, %d MB before: not released", after/1024, before/1024)
	}
}
