package cli

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// fakeLoad is a supervisor whose readiness and fleet changes the test drives.
type fakeLoad struct {
	ready    chan struct{}
	mu       sync.Mutex
	next     chan struct{}
	changing bool // every FleetNotify reports a change at once (a fleet that never settles)
}

func newFakeLoad() *fakeLoad { return &fakeLoad{ready: make(chan struct{}), next: make(chan struct{})} }

func (f *fakeLoad) Backends() []backends.Backend { return []backends.Backend{namedBackend("k8s:test")} }
func (f *fakeLoad) Ready(string) <-chan struct{} { return f.ready }
func (f *fakeLoad) FleetNotify() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changing {
		c := make(chan struct{})
		close(c)
		return c
	}
	return f.next
}
func (f *fakeLoad) setChanging(on bool) { f.mu.Lock(); f.changing = on; f.mu.Unlock() }
func (f *fakeLoad) change()             { f.mu.Lock(); close(f.next); f.next = make(chan struct{}); f.mu.Unlock() }

type namedBackend string

func (n namedBackend) Name() string        { return string(n) }
func (n namedBackend) Kind() backends.Kind { return backends.KindKubernetes }
func (n namedBackend) Watch(ctx context.Context, _ func(backends.Event)) error {
	<-ctx.Done()
	return nil
}

// fakeTimers stands in for time.After: each call is announced on asked with its duration and
// its channel, which the test fires when it chooses, so no test outcome depends on the scheduler.
type fakeTimers struct{ asked chan fakeTimer }

type fakeTimer struct {
	d    time.Duration
	fire chan time.Time
}

func newFakeTimers() *fakeTimers { return &fakeTimers{asked: make(chan fakeTimer, 16)} }

func (f *fakeTimers) after(d time.Duration) <-chan time.Time {
	t := fakeTimer{d, make(chan time.Time, 1)}
	f.asked <- t
	return t.fire
}

// next returns the next timer asked for, failing the test if it is not for d.
func (f *fakeTimers) next(t *testing.T, d time.Duration) fakeTimer {
	t.Helper()
	select {
	case got := <-f.asked:
		if got.d != d {
			t.Fatalf("timer for %s, want %s", got.d, d)
		}
		return got
	case <-time.After(5 * time.Second):
		t.Fatalf("no timer for %s was asked for", d)
	}
	return fakeTimer{}
}

// The memory of the load is released once, after every backend answered and the fleet stayed
// still for the quiet period: not while a backend is still listing, not while changes keep
// arriving (the policies completing the posture), and at the latest after atMost.
func TestReleaseAfterLoadWaitsForASettledFleet(t *testing.T) {
	const quiet, atMost = time.Second, time.Hour
	f, clock := newFakeLoad(), newFakeTimers()
	released := make(chan struct{}, 2)
	done := make(chan struct{})
	go func() {
		releaseAfterLoad(context.Background(), f, clock.after, quiet, atMost, func() { released <- struct{}{} })
		close(done)
	}()
	clock.next(t, atMost)
	notReleased := func(when string) {
		t.Helper()
		select {
		case <-released:
			t.Fatal("released " + when)
		case <-time.After(20 * time.Millisecond):
		}
	}
	notReleased("before the backend answered")
	close(f.ready)
	waiting := clock.next(t, quiet)
	for range 3 { // a change within the quiet period starts it again…
		f.change()
		stale := waiting
		waiting = clock.next(t, quiet)
		stale.fire <- time.Now() // …and the period it cut short no longer counts
		notReleased("at the end of a quiet period a change had cut short")
	}
	waiting.fire <- time.Now()
	<-done
	if n := len(released); n != 1 {
		t.Fatalf("released %d times after the fleet settled, want once", n)
	}
}

func TestReleaseAfterLoadGivesUpWaitingAtMost(t *testing.T) {
	var released atomic.Int32
	release := func() { released.Add(1) }
	clock := newFakeTimers()
	done := make(chan struct{})
	go func() { // a backend that never answers
		releaseAfterLoad(context.Background(), newFakeLoad(), clock.after, time.Second, time.Hour, release)
		close(done)
	}()
	clock.next(t, time.Hour).fire <- time.Now()
	<-done
	if released.Load() != 1 {
		t.Fatal("a backend that never answers held the release back past atMost")
	}
	f := newFakeLoad() // a fleet that never settles
	f.setChanging(true)
	close(f.ready)
	deadline := make(chan time.Time, 1)
	deadline <- time.Now()
	releaseAfterLoad(context.Background(), f, func(time.Duration) <-chan time.Time { return deadline }, time.Second, time.Hour, release)
	if released.Load() != 2 {
		t.Fatal("a fleet that never settles held the release back past atMost")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	releaseAfterLoad(ctx, newFakeLoad(), time.After, time.Hour, time.Hour, release)
	if released.Load() != 2 {
		t.Error("released after the command ended")
	}
}

// After the load, memory is released at a check that finds the fleet unchanged since the one
// before and enough of the heap free; a changing fleet or a small free heap holds it back.
// The test drives the checks: a send on the unbuffered tick returns once the check before it
// has finished.
func TestReleaseAfterBurstsWaitsForAQuietFleetAndFreeMemory(t *testing.T) {
	f := newFakeLoad()
	var free atomic.Uint64
	tick := make(chan time.Time)
	var released atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		releaseAfterBursts(ctx, f, tick, func() uint64 { return 100 }, free.Load, func() { released.Add(1) })
		close(done)
	}()
	checks := func(n int) {
		for range n {
			tick <- time.Now()
		}
	}
	free.Store(99)
	checks(3)
	if released.Load() != 0 {
		t.Fatal("released with less free than the threshold")
	}
	f.setChanging(true) // from now on every check sees a change…
	f.change()
	checks(1) // …including the one that was under way
	free.Store(1000)
	checks(4)
	if released.Load() != 0 {
		t.Fatal("released while the fleet kept changing")
	}
	f.setChanging(false)
	for i := 0; released.Load() == 0; i++ {
		if i == 10 {
			t.Fatal("never released once the fleet was quiet with memory free")
		}
		checks(1)
	}
	cancel()
	<-done
}

// The release reads metrics this runtime has, as numbers (a misspelt name reads as 0 for ever).
func TestHeapMetricsExist(t *testing.T) {
	kinds := map[string]metrics.ValueKind{}
	for _, d := range metrics.All() {
		kinds[d.Name] = d.Kind
	}
	for _, name := range []string{heapFreeMetric, heapObjectsMetric, heapLiveMetric} {
		if k, ok := kinds[name]; !ok || k != metrics.KindUint64 {
			t.Errorf("metric %s: present %v, kind %v; want a uint64", name, ok, k)
		}
	}
	if heapMetric(heapLiveMetric) == 0 {
		t.Error("the live heap reads as 0 in a running test")
	}
}

// Garbage counts as reclaimable before a collection has swept it: a burst's is released at the
// next quiet check, not after the runtime's forced collection two minutes later.
func TestReclaimableCountsUncollectedGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection in between: the burst is garbage, unswept
	runtime.GC()
	var keep [][]byte
	for range 64 { // 16 MiB, dropped at once
		keep = append(keep, make([]byte, 256<<10))
	}
	runtime.KeepAlive(keep)
	// (Allocating from free pages moves bytes from free to garbage: the sum holds both.)
	if got := reclaimable(); got < 15<<20 {
		t.Fatalf("reclaimable after dropping 16 MiB = %d MiB; want at least the garbage", got>>20)
	}
}

// A release is worth its collection from 8 MiB free, or an eighth of the live heap when that is
// more: 5,000 pods (~30 MiB live) release bursts of 8 MiB; 50,000 (~300 MiB) of 37.5 MiB, as
// before the threshold followed the heap.
func TestBurstThresholdFollowsTheLiveHeap(t *testing.T) {
	for _, tc := range []struct{ live, want uint64 }{
		{0, 8 << 20},
		{30 << 20, 8 << 20},
		{64 << 20, 8 << 20},
		{300 << 20, 300 << 20 / 8},
	} {
		if got := burstThreshold(tc.live); got != tc.want {
			t.Errorf("burstThreshold(%d MiB) = %d; want %d", tc.live>>20, got, tc.want)
		}
	}
}

// A release waits for the operator to stop typing: its burst of CPU would hold their keys.
func TestReleaseSkippedWhileTheOperatorTypes(t *testing.T) {
	typing, released := true, 0
	release := unlessTyping(func() bool { return typing }, func() { released++ })
	release()
	if released != 0 {
		t.Fatal("released while the operator was typing")
	}
	typing = false
	release()
	if released != 1 {
		t.Fatalf("released %d times once the operator stopped, want 1", released)
	}
}
