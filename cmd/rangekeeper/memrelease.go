package main

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// Settling: a fleet that has not changed for loadQuiet after every backend answered has loaded;
// past loadAtMost the memory is released whatever the fleet does.
const (
	loadQuiet  = 5 * time.Second
	loadAtMost = 2 * time.Minute
)

// After the load: every burstCheck, memory the heap holds free beyond burstFree after a quiet
// period is handed back.
const (
	burstCheck = 10 * time.Second
	burstFree  = 32 << 20
)

// releaseLoadMemory runs releaseAfterLoad, then releaseAfterBursts, for the command's
// supervisor, in the background.
func releaseLoadMemory(ctx context.Context, s loadWatcher) {
	go func() {
		releaseAfterLoad(ctx, s, time.After, loadQuiet, loadAtMost, debug.FreeOSMemory)
		tick := time.NewTicker(burstCheck)
		defer tick.Stop()
		releaseAfterBursts(ctx, s, tick.C, burstFree, heapFree, debug.FreeOSMemory)
	}()
}

// loadWatcher is what releaseAfterLoad needs of the supervisor.
type loadWatcher interface {
	Backends() []backends.Backend
	Ready(backend string) <-chan struct{}
	FleetNotify() <-chan struct{}
}

// releaseAfterLoad calls release (debug.FreeOSMemory) once the initial load has settled: every
// backend answered and the fleet did not change for quiet, or atMost passed. Listing thousands
// of sandboxes decodes every object in full before the backends keep their slim copies; left to
// itself, the runtime hands that peak back to the system slowly, page runs at a time over
// minutes, and keeps some of it. Released at once, it costs one collection: at 5,000 pods the
// workbench holds 132 MB one and two minutes after start instead of 160 MB (issue 18: the RSS
// stays flat after the table is full). after is time.After outside tests.
func releaseAfterLoad(ctx context.Context, s loadWatcher, after func(time.Duration) <-chan time.Time, quiet, atMost time.Duration, release func()) {
	deadline := after(atMost)
	for _, b := range s.Backends() {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			release()
			return
		case <-s.Ready(b.Name()):
		}
	}
	for {
		changed := s.FleetNotify()
		select {
		case <-ctx.Done():
			return
		case <-changed:
			continue
		case <-deadline:
		case <-after(quiet):
		}
		release()
		return
	}
}

// releaseAfterBursts calls release whenever, at a check (each value from tick), the fleet did not
// change since the previous check and the heap holds at least threshold bytes free that the runtime
// has not returned (free() reads it). The load goes on after the first table and after the
// first release: with Cilium the network policies list (kilobytes of JSON each), the watch
// seals a baseline per sandbox, the inventory cache is first written, and a reconnect lists
// everything again. Each burst leaves the heap's free pages up to the collector's goal (twice
// the live heap) with the process; at 50,000 pods the RSS grew from 343 MiB at the full table
// to 702 MiB after three idle minutes. Outside bursts the check finds little free and costs a
// wake-up per tick.
func releaseAfterBursts(ctx context.Context, s loadWatcher, tick <-chan time.Time, threshold uint64, free func() uint64, release func()) {
	changed := s.FleetNotify()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		quiet := true
		select {
		case <-changed:
			quiet = false
		default:
		}
		changed = s.FleetNotify()
		if quiet && free() >= threshold {
			release()
		}
	}
}

// heapFreeMetric: heap memory free and not returned to the system.
const heapFreeMetric = "/memory/classes/heap/free:bytes"

// heapFree is the memory the heap holds free and has not returned to the system.
func heapFree() uint64 {
	m := []metrics.Sample{{Name: heapFreeMetric}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64()
}
