package procs

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkKeyBehindBusyPs is the pattern the workbench's key presses met while 50,000 pods
// loaded, reduced to the runtime: pairs of goroutines decode JSON and hand it over (as the
// watch decoders and their consumers do) while other processes keep every core busy (the
// control plane beside it), and a reader goroutine readies a parser and goes straight back
// into a blocking read (Bubble Tea's terminal reader). It reports how long the parser waits to
// run after being readied (p50, p99), with GOMAXPROCS at the core count and as ForInteractive
// sets it.
func BenchmarkKeyBehindBusyPs(b *testing.B) {
	defer spinners(b, runtime.NumCPU())()
	for _, c := range []struct {
		name  string
		procs int
	}{{"cores", runtime.NumCPU()}, {"interactive", max(runtime.NumCPU(), Interactive)}} {
		b.Run(c.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			stop := busy(b, runtime.NumCPU())
			defer stop()
			waits := keyWaits(b, b.N)
			slices.Sort(waits)
			q := func(p float64) float64 { return float64(waits[int(p*float64(len(waits)-1))].Microseconds()) }
			b.ReportMetric(q(0.5), "p50-µs")
			b.ReportMetric(q(0.99), "p99-µs")
		})
	}
}

// spinEnv makes the test binary a CPU spinner (spinners).
const spinEnv = "RANGEKEEPER_PROCS_SPIN"

func TestMain(m *testing.M) {
	if os.Getenv(spinEnv) == "1" {
		for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); {
			for range 1 << 20 {
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// spinners starts n processes that keep a core busy each, until stopped.
func spinners(b *testing.B, n int) (stop func()) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), spinEnv+"=1")
		if err := c.Start(); err != nil {
			stop()
			b.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	return stop
}

// busy starts pairs goroutine pairs that decode a document and pass it on, until stopped.
func busy(b *testing.B, pairs int) (stop func()) {
	doc, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "agent-env-x", "labels": map[string]string{
		"app.kubernetes.io/instance": "agent-env-x", "inspect/task": "cyber"}}, "spec": map[string]any{"containers": []string{"a", "b"}}})
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range pairs {
		ch := make(chan map[string]any)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer close(ch)
			for {
				var v map[string]any
				if err := json.Unmarshal(doc, &v); err != nil {
					b.Error(err)
					return
				}
				select {
				case ch <- v:
				case <-done:
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for v := range ch {
				_ = len(v)
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// keyWaits presses n keys, 2 ms apart, through a pipe read by a raw blocking read (no netpoller,
// as cancelreader's), and returns how long the parser waited for each after being readied.
func keyWaits(b *testing.B, n int) []time.Duration {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	fd := int(r.Fd()) // Fd puts the pipe in blocking mode: reads block the thread
	readied := make(chan time.Time)
	go func() {
		defer r.Close()
		defer close(readied)
		buf := make([]byte, 1)
		for {
			if k, err := syscall.Read(fd, buf); k <= 0 || err != nil {
				return
			}
			readied <- time.Now() // the parser becomes runnable; the reader reads again at once
		}
	}()
	waits := make([]time.Duration, 0, n)
	b.ResetTimer()
	for range n {
		if _, err := w.Write([]byte{'?'}); err != nil {
			b.Fatal(err)
		}
		waits = append(waits, time.Since(<-readied))
		time.Sleep(2 * time.Millisecond)
	}
	b.StopTimer()
	return waits
}
