package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
)

// lsWith runs `rangekeeper ls args...` with extra backends (and the environment's Docker
// engine, which --backend filters drop) writing stdout to out.
func lsWith(t testing.TB, out io.Writer, extra []backends.Backend, args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), out, &errOut)
	f.extraBackends = extra
	root := newRootCmd(f)
	root.SetArgs(append([]string{"--config", cfg, "--state", filepath.Join(dir, "state.db"), "ls"}, args...))
	root.SetOut(out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	f.closeAll()
	return errOut.String(), err
}

func reset(sbs ...backends.Sandbox) backends.Event {
	return backends.Event{Type: backends.EventReset, Sandboxes: sbs}
}

// within fails the test if fn has not returned after d (a watchdog against a hang, not a
// speed target).
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still waiting after %s", what, d)
	}
}

func TestLsJSONForOneBackendDoesNotWaitForADeadOne(t *testing.T) {
	live := &chanBackend{name: "pve:live", kind: backends.KindProxmox, evs: make(chan backends.Event, 1)}
	dead := &chanBackend{name: "pve:dead", kind: backends.KindProxmox, evs: make(chan backends.Event)} // never answers
	live.evs <- reset(backends.Sandbox{ID: "pve:live/100", Name: "vm-100", Backend: backends.KindProxmox, Endpoint: "pve:live"})
	var out bytes.Buffer
	var stderr string
	var err error
	within(t, time.Minute, "ls --backend pve:live with pve:dead configured (--wait 1h)", func() {
		stderr, err = lsWith(t, &out, []backends.Backend{live, dead}, "-o", "json", "--backend", "pve:live", "--wait", "1h")
	})
	if err != nil {
		t.Fatalf("ls: %v\n%s", err, stderr)
	}
	var res lsResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if len(res.Sandboxes) != 1 || res.Sandboxes[0].ID != "pve:live/100" {
		t.Fatalf("sandboxes: %+v", res.Sandboxes)
	}
	if len(res.Backends) != 1 || res.Backends[0].Backend != "pve:live" || strings.Contains(stderr, "dead") {
		t.Fatalf("backends %+v, stderr %q: the unnamed backend was built or waited for", res.Backends, stderr)
	}
}

func TestLsJSONStreamsEachBackendAsItAnswers(t *testing.T) {
	fast := &chanBackend{name: "pve:fast", kind: backends.KindProxmox, evs: make(chan backends.Event, 1)}
	slow := &chanBackend{name: "pve:slow", kind: backends.KindProxmox, evs: make(chan backends.Event, 1)}
	fast.evs <- reset(backends.Sandbox{ID: "pve:fast/1", Name: "fast-one"}, backends.Sandbox{ID: "pve:fast/0", Name: "fast-zero"})
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var stderr string
	go func() {
		var err error
		stderr, err = lsWith(t, pw, []backends.Backend{fast, slow}, "-o", "json", "--backend", "pve", "--wait", "1h")
		pw.CloseWithError(err)
		done <- err
	}()
	var doc strings.Builder
	sc := bufio.NewScanner(pr)
	within(t, time.Minute, "the fast backend's sandboxes while the slow one is silent", func() {
		for sc.Scan() {
			doc.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "pve:fast/1") {
				return
			}
		}
	})
	if strings.Contains(doc.String(), "pve:slow") {
		t.Fatal("the slow backend appeared before it answered")
	}
	slow.evs <- reset(backends.Sandbox{ID: "pve:slow/7", Name: "slow-seven"})
	for sc.Scan() {
		doc.WriteString(sc.Text() + "\n")
	}
	if err := <-done; err != nil {
		t.Fatalf("ls: %v\n%s", err, stderr)
	}
	var res lsResult
	if err := json.Unmarshal([]byte(doc.String()), &res); err != nil {
		t.Fatalf("the streamed document is not JSON: %v\n%s", err, doc.String())
	}
	var ids []string
	for _, sb := range res.Sandboxes {
		ids = append(ids, sb.ID)
	}
	if strings.Join(ids, " ") != "pve:fast/0 pve:fast/1 pve:slow/7" || len(res.Backends) != 2 {
		t.Fatalf("sandboxes %v (want each backend's sorted, in answer order), backends %+v", ids, res.Backends)
	}
}

func TestLsJSONReportsABackendThatNeverAnswered(t *testing.T) {
	dead := &chanBackend{name: "pve:dead", kind: backends.KindProxmox, evs: make(chan backends.Event)}
	var out bytes.Buffer
	stderr, err := lsWith(t, &out, []backends.Backend{dead}, "-o", "json", "--backend", "pve", "--wait", "50ms")
	if err != nil {
		t.Fatal(err)
	}
	var res lsResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.Sandboxes) != 0 || res.Sandboxes == nil {
		t.Fatalf("want an empty sandboxes array: %v\n%s", err, out.String())
	}
	if !strings.Contains(stderr, "pve:dead unreachable") {
		t.Fatalf("stderr %q does not name the silent backend", stderr)
	}
}

// BenchmarkLsJSON2500 is `rangekeeper ls -o json --backend k8s` over 2,500 simulated
// Kubernetes sandboxes, start to last byte (1.05 s and 18 MB before streaming).
func BenchmarkLsJSON2500(b *testing.B) {
	b.ReportAllocs()
	u0 := procCPU()
	defer func() { b.ReportMetric(float64((procCPU()-u0).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
	for b.Loop() {
		sim := simfleet.New("sim", backends.KindKubernetes, 2_500, 0)
		var n countWriter
		if stderr, err := lsWith(b, &n, []backends.Backend{sim}, "-o", "json", "--backend", "k8s"); err != nil || n < 2_500*500 {
			b.Fatalf("ls: %v (%d bytes)\n%s", err, n, stderr)
		}
	}
}

// procCPU is the process's CPU time (user+system): wall time on the shared machine follows its load.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
