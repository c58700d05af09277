package main

import (
	"context"
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

// The memory of the load is released once, after every backend answered and the fleet stayed
// still for the quiet period: not while a backend is still listing, not while changes keep
// arriving (the policies completing the posture), and at the latest after atMost.
func TestReleaseAfterLoadWaitsForASettledFleet(t *testing.T) {
	const quiet = 150 * time.Millisecond
	f := newFakeLoad()
	var released atomic.Int32
	var at atomic.Int64
	done := make(chan struct{})
	go func() {
		releaseAfterLoad(context.Background(), f, quiet, time.Hour, func() { released.Add(1); at.Store(time.Now().UnixNano()) })
		close(done)
	}()
	time.Sleep(3 * quiet)
	if released.Load() != 0 {
		t.Fatal("released before the backend answered")
	}
	close(f.ready)
	for range 5 { // changes closer together than quiet hold the release back
		time.Sleep(quiet / 3)
		f.change()
	}
	last := time.Now()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("never released after the fleet settled")
	}
	if n := released.Load(); n != 1 {
		t.Fatalf("released %d times, want once", n)
	}
	if gap := time.Unix(0, at.Load()).Sub(last); gap < quiet {
		t.Errorf("released %s after the last change, before the quiet period (%s)", gap, quiet)
	}
}

func TestReleaseAfterLoadGivesUpWaitingAtMost(t *testing.T) {
	f := newFakeLoad() // never ready
	var released atomic.Int32
	releaseAfterLoad(context.Background(), f, time.Hour, 100*time.Millisecond, func() { released.Add(1) })
	if released.Load() != 1 {
		t.Fatal("a backend that never answers held the release back past atMost")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	releaseAfterLoad(ctx, newFakeLoad(), time.Hour, time.Hour, func() { released.Add(1) })
	if released.Load() != 1 {
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
		releaseAfterBursts(ctx, f, tick, 100, free.Load, func() { released.Add(1) })
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

// heapFree reads a metric this runtime has, as a number (a misspelt name reads as 0 for ever).
func TestHeapFreeMetricExists(t *testing.T) {
	for _, d := range metrics.All() {
		if d.Name == heapFreeMetric {
			if d.Kind != metrics.KindUint64 {
				t.Fatalf("%s is of kind %v", heapFreeMetric, d.Kind)
			}
			return
		}
	}
	t.Fatalf("the runtime has no metric %s", heapFreeMetric)
}
