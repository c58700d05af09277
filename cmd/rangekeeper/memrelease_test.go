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
	ready chan struct{}
	mu    sync.Mutex
	next  chan struct{}
}

func newFakeLoad() *fakeLoad { return &fakeLoad{ready: make(chan struct{}), next: make(chan struct{})} }

func (f *fakeLoad) Backends() []backends.Backend { return []backends.Backend{namedBackend("k8s:test")} }
func (f *fakeLoad) Ready(string) <-chan struct{} { return f.ready }
func (f *fakeLoad) FleetNotify() <-chan struct{} { f.mu.Lock(); defer f.mu.Unlock(); return f.next }
func (f *fakeLoad) change()                      { f.mu.Lock(); close(f.next); f.next = make(chan struct{}); f.mu.Unlock() }

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
func TestReleaseAfterBurstsWaitsForAQuietFleetAndFreeMemory(t *testing.T) {
	const interval = 40 * time.Millisecond
	f := newFakeLoad()
	var free atomic.Uint64
	released := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		releaseAfterBursts(ctx, f, interval, 100, free.Load, func() { released <- struct{}{} })
		close(done)
	}()
	quietFor := func(d time.Duration) bool { // true if a release came within d
		select {
		case <-released:
			return true
		case <-time.After(d):
			return false
		}
	}
	free.Store(99)
	if quietFor(5 * interval) {
		t.Fatal("released with less free than the threshold")
	}
	free.Store(1000)
	stop := make(chan struct{})
	go func() { // a burst: the fleet changes faster than the checks
		for {
			select {
			case <-stop:
				return
			case <-time.After(interval / 4):
				f.change()
			}
		}
	}()
	if quietFor(5 * interval) {
		t.Fatal("released while the fleet kept changing")
	}
	close(stop)
	if !quietFor(5 * time.Second) {
		t.Fatal("never released once the fleet was quiet with memory free")
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
