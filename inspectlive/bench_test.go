package inspectlive_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchFleet is 200 running samples across 4 buffers of one process, each sample with a trace
// line for its compose project and a few events.
func benchFleet(b *testing.B) (*world, []*it.DB) {
	w := &world{data: b.TempDir() + "/inspect_ai", logs: b.TempDir()}
	pid := os.Getpid()
	var dbs []*it.DB
	var trace []string
	for k := range 4 {
		task := fmt.Sprintf("task%d", k)
		path := it.BufferPath(w.data, logBase(task, "tid"), pid)
		db := it.NewDB(b, path, true)
		dbs = append(dbs, db)
		it.WriteEval(b, w.logs+"/"+logBase(task, "tid"), true, it.EvalMember{Name: "_journal/start.json", Body: it.StartJSON(task, "openai/gpt-test")})
		for s := range 50 {
			id := fmt.Sprint(s)
			if err := db.TryStartSample(id, 1, fmt.Sprintf("u-%d-%d", k, s)); err != nil {
				b.Fatal(err)
			}
			if err := db.TryAddEvents(id, 1, it.Model("m"+id, 1, 100, false), it.SandboxExec(2, "bash --login -c ls", 0, "x"),
				it.ToolCall(fmt.Sprintf("t-%d-%d", k, s), 3, "id", true, "")); err != nil {
				b.Fatal(err)
			}
			trace = append(trace, it.TraceSubprocess(1, fmt.Sprintf("inspect-task%d-i%06d", k, s), task, s, 1))
		}
	}
	it.AppendTrace(b, it.TracePath(w.data, pid), trace...)
	return w, dbs
}

// BenchmarkPoll200Samples4Buffers measures what the watcher costs an operator's machine:
// CPU per poll tick when nothing changed and when a writer adds 50 events/s (50 events per
// 1 s tick), and how long a new sample takes to become linkable, with the default 1 s interval.
func BenchmarkPoll200Samples4Buffers(b *testing.B) {
	w, dbs := benchFleet(b)
	ctx := context.Background()
	wt := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}, LogDirs: []string{w.logs}})
	defer wt.Close()
	wt.Poll(ctx)
	if n := len(wt.Evals()); n != 4 {
		b.Fatalf("%d evals", n)
	}
	// The same fleet with the data directories listed on every tick: the idle cost's upper bound
	// (the back-to-back ticks below would otherwise hide the 2 s rescan).
	scanning := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}, LogDirs: []string{w.logs}, Rescan: 1})
	defer scanning.Close()
	scanning.Poll(ctx)
	const ticksPerOp = 20
	var idle, idleScan, active time.Duration
	ev := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for range ticksPerOp {
			c := cpuTime()
			wt.Poll(ctx)
			idle += cpuTime() - c
			c = cpuTime()
			scanning.Poll(ctx)
			idleScan += cpuTime() - c

			// One second of the writer: 50 events over the 4 buffers (not timed).
			for j := range 50 {
				ev++
				db := dbs[j%4]
				if err := db.TryAddEvents(fmt.Sprint(ev%50), 1, it.SandboxExec(ev, "bash --login -c 'cat /etc/hosts'", 0, "127.0.0.1 localhost")); err != nil {
					b.Fatal(err)
				}
			}
			scanning.Poll(ctx) // catch up, untimed, so its next tick is idle again
			c = cpuTime()
			wt.Poll(ctx)
			active += cpuTime() - c
		}
	}
	b.StopTimer()
	ticks := float64(b.N * ticksPerOp)
	idleUS := float64(idle.Microseconds()) / ticks
	b.ReportMetric(idleUS, "idle-cpu-µs/tick")
	b.ReportMetric(idleUS/1e6*100, "idle-%core@1s")
	b.ReportMetric(float64(idleScan.Microseconds())/ticks, "idle+rescan-cpu-µs/tick")
	b.ReportMetric(float64(active.Microseconds())/ticks, "50ev-cpu-µs/tick")
	b.ReportMetric(linkLatencyP99(b, w, dbs).Seconds()*1000, "link-p99-ms")
}

// linkLatencyP99 runs the watcher in the background at its default interval while a writer adds
// 50 events/s and starts a new sample (with a pod uuid and a traced project) five times a
// second, and measures from each insert until Link shows the sample.
func linkLatencyP99(b *testing.B, w *world, dbs []*it.DB) time.Duration {
	wt := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}, LogDirs: []string{w.logs}})
	defer wt.Close()
	wt.Start()
	type want struct {
		uuid string
		at   time.Time
	}
	var (
		mu        sync.Mutex
		pending   []want
		latencies []time.Duration
		writeErr  error
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the writer
		defer close(done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			db := dbs[i%4]
			var err error
			if i%10 == 0 {
				uuid := fmt.Sprintf("new-%d-%d", time.Now().UnixNano(), i)
				err = db.TryStartSample(uuid, 1, uuid)
				mu.Lock()
				pending = append(pending, want{uuid, time.Now()})
				mu.Unlock()
			} else {
				err = db.TryAddEvents(fmt.Sprint(i%50), 1, it.SandboxExec(i, "true", 0, ""))
			}
			if err != nil {
				mu.Lock()
				writeErr = err
				mu.Unlock()
				return
			}
		}
	}()
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		rest := pending[:0]
		for _, p := range pending {
			if wt.Link(k8s("r", map[string]string{"inspectSampleUUID": p.uuid}, nil)).How == inspectlive.HowExact {
				latencies = append(latencies, time.Since(p.at))
			} else {
				rest = append(rest, p)
			}
		}
		pending = rest
	}
	deadline := time.After(4 * time.Second)
	for running := true; running; {
		select {
		case <-wt.Changed():
			check()
		case <-deadline:
			running = false
		}
	}
	close(stop)
	<-done
	drain := time.After(3 * time.Second)
	for {
		mu.Lock()
		left := len(pending)
		mu.Unlock()
		if left == 0 {
			break
		}
		select {
		case <-wt.Changed():
			check()
		case <-drain:
			b.Fatalf("%d new samples never became linkable", left)
		}
	}
	if writeErr != nil {
		b.Fatal(writeErr)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	if len(latencies) == 0 {
		b.Fatal("no latency measured")
	}
	return latencies[int(math.Ceil(0.99*float64(len(latencies))))-1]
}
