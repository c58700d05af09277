package sshd_test

import (
	"context"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/daemon/daemontest"
	"github.com/rangekeeper/rangekeeper/daemon/sshd"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
)

// benchRig is a daemon over a simulated 1,000-sandbox fleet (one change every 2 s, as the demo
// churns), serving SSH on loopback; n operators share it.
type benchRig struct {
	opsPath string
	addr    string
	d       *daemon.Daemon
	signers []gossh.Signer
}

func newBenchRig(b testing.TB, n int) *benchRig {
	b.Helper()
	return newSimRig(b, n, 1000, 2*time.Second, sshd.Options{MaxSessions: max(n, 2), FPS: benchFPS}, nil)
}

// newSimRig is a benchRig over a fleet of size sandboxes changing one every churn, served with
// o (its host key path is set here); setup, if any, sees the server before it serves.
func newSimRig(b testing.TB, n, size int, churn time.Duration, o sshd.Options, setup func(*sshd.Server)) *benchRig {
	b.Helper()
	dir := b.TempDir()
	db := daemontest.State(b, dir)
	sup := daemontest.Supervisor(b, 10*time.Second, simfleet.New("sim", backends.KindKubernetes, size, churn))
	r := &benchRig{opsPath: filepath.Join(dir, "operators.yaml")}
	var ops strings.Builder
	ops.WriteString("operators:\n")
	for i := range n {
		s := newSigner(b)
		r.signers = append(r.signers, s)
		ops.WriteString("  - name: op" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "\n    role: operator\n    keys: [\"" + authorized(s) + "\"]\n")
	}
	os.WriteFile(r.opsPath, []byte(ops.String()), 0o600)
	var err error
	r.d, err = daemon.New(daemon.Options{Supervisor: sup, State: db, NewLayer: daemontest.Layer(sup, db), OperatorsPath: r.opsPath, ActionRate: 1, ActionBurst: 2, Layer: action.Options{LockDir: filepath.Join(dir, "locks")}})
	if err != nil {
		b.Fatal(err)
	}
	o.HostKeyPath = filepath.Join(dir, "hostkey")
	srv, err := sshd.New(r.d, o)
	if err != nil {
		b.Fatal(err)
	}
	if setup != nil {
		setup(srv)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l)
	waitServing(b, l.Addr().String())
	b.Cleanup(func() {
		c, cc := context.WithTimeout(context.Background(), 5*time.Second)
		defer cc()
		srv.Shutdown(c)
		r.d.Shutdown(c)
	})
	r.addr = l.Addr().String()
	return r
}

// benchFPS is the sessions' frame cap in the benchmarks (RK_BENCH_FPS; default the daemon's).
var benchFPS, _ = strconv.Atoi(os.Getenv("RK_BENCH_FPS"))

// client is a benchmark session: it signals every chunk of output it receives.
type client struct {
	c     *gossh.Client
	sess  *gossh.Session
	in    io.Writer
	frame chan struct{}
}

func (c *client) Write(p []byte) (int, error) {
	select {
	case c.frame <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (r *benchRig) connect(b testing.TB, i int, out io.Writer) *client {
	b.Helper()
	c, err := dial(r.addr, r.signers[i])
	if err != nil {
		b.Fatal(err)
	}
	s, err := c.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	cl := &client{c: c, sess: s, frame: make(chan struct{}, 1)}
	if err := s.RequestPty("xterm-256color", 40, 160, gossh.TerminalModes{}); err != nil {
		b.Fatal(err)
	}
	cl.in, _ = s.StdinPipe()
	if out == nil {
		out = cl
	}
	s.Stdout = out
	if err := s.Shell(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return cl
}

// settle waits until the session has painted and gone quiet.
func (c *client) settle() {
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-c.frame:
		case <-time.After(300 * time.Millisecond):
			return
		case <-deadline:
			return
		}
	}
}

// press sends a cursor move and returns how long until the next output arrives.
func (c *client) press(key string) time.Duration {
	for len(c.frame) > 0 {
		<-c.frame
	}
	start := time.Now()
	io.WriteString(c.in, key)
	select {
	case <-c.frame:
		return time.Since(start)
	case <-time.After(5 * time.Second):
		return 5 * time.Second
	}
}

// quantile is the nearest-rank q-quantile of ds (sorted in place): the smallest value that at
// least q of the samples do not exceed. With 100 samples p99 is the second largest, not the max.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[max(0, int(math.Ceil(q*float64(len(ds))))-1)]
}

func p99(ds []time.Duration) time.Duration { return quantile(ds, 0.99) }

// processCPU is the CPU time this process (server and in-process clients) has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// keyToFrame runs b.N rounds in which every session presses a key at once; it reports the
// worst session's p99 and the p99 over all presses.
func keyToFrame(b *testing.B, sessions int, frozen bool) {
	r := newBenchRig(b, sessions+1)
	cls := make([]*client, sessions)
	for i := range cls {
		cls[i] = r.connect(b, i, nil)
	}
	if frozen {
		// A client that never reads: its output stops in its SSH window, and its server side
		// keeps being asked for redraws.
		fz := r.connect(b, sessions, blockWriter{})
		go func() {
			for ctx := b.Context(); ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
				io.WriteString(fz.in, "\x0cj")
			}
		}()
	}
	for _, c := range cls {
		c.settle()
	}
	lat := make([][]time.Duration, sessions)
	b.ResetTimer()
	cpu0 := processCPU()
	for n := 0; n < b.N; n++ {
		key := "j"
		if n%2 == 1 {
			key = "k"
		}
		var wg sync.WaitGroup
		for i, c := range cls {
			wg.Go(func() { lat[i] = append(lat[i], c.press(key)) })
		}
		wg.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N*sessions), "cpu-us/press")
	var all []time.Duration
	worst, slowest := time.Duration(0), time.Duration(0)
	for _, l := range lat {
		all = append(all, l...)
		worst = max(worst, p99(l)) // sorts l
		slowest = max(slowest, l[len(l)-1])
	}
	b.ReportMetric(float64(slowest.Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(quantile(all, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-session-p99-ms")
	b.ReportMetric(float64(p99(all).Microseconds())/1000, "p99-ms")
}

type blockWriter struct{}

func (blockWriter) Write(p []byte) (int, error) { select {} }

// BenchmarkKeyToFrame20Sessions: 20 SSH sessions on a 1,000-sandbox fleet press a key at once.
func BenchmarkKeyToFrame20Sessions(b *testing.B) { keyToFrame(b, 20, false) }

// BenchmarkKeyToFrame20SessionsOneFrozen: the same with a 21st client that never reads.
func BenchmarkKeyToFrame20SessionsOneFrozen(b *testing.B) { keyToFrame(b, 20, true) }

// BenchmarkMemoryPerSession reports the heap added by each of 20 sessions (server and, since
// they share this process, the x/crypto client's side too: an upper bound).
func BenchmarkMemoryPerSession(b *testing.B) {
	r := newBenchRig(b, 20)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for n := 0; n < b.N; n++ {
		before := heap()
		cls := make([]*client, 20)
		for i := range cls {
			cls[i] = r.connect(b, i, nil)
		}
		for _, c := range cls {
			c.settle()
		}
		after := heap()
		b.ReportMetric(float64(int64(after)-int64(before))/20/(1<<20), "MB/session")
		for _, c := range cls {
			c.c.Close()
		}
		for r.d.Hub().Count() > 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// BenchmarkIdleCPU20Sessions reports the process's CPU, as a share of one core, while 20
// sessions sit idle on the churning fleet (clients included: an upper bound for the daemon).
func BenchmarkIdleCPU20Sessions(b *testing.B) {
	r := newBenchRig(b, 20)
	cls := make([]*client, 20)
	for i := range cls {
		cls[i] = r.connect(b, i, nil)
	}
	for _, c := range cls {
		c.settle()
	}
	b.ResetTimer()
	start, c0 := time.Now(), processCPU()
	for n := 0; n < b.N; n++ {
		time.Sleep(2 * time.Second)
	}
	b.ReportMetric(float64(processCPU()-c0)/float64(time.Since(start))*100, "%core")
}
