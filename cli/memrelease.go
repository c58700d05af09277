package cli

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
)

// Settling: a fleet that has not changed for loadQuiet after every backend answered has loaded;
// past loadAtMost the memory is released whatever the fleet does.
const (
	loadQuiet  = 5 * time.Second
	loadAtMost = 2 * time.Minute
)

// After the load: every burstCheck, memory the heap holds free after a quiet period is handed
// back when it is at least burstThreshold. At 5,000 pods the bursts after the first table (the
// policies' reset, the first cache save) left ~15 MiB free in a 30 MiB heap, resident for good
// under the earlier fixed threshold of 32 MiB: RSS 86 MiB at the full table, 102 MiB after
// idling (flat).
const (
	burstCheck = 10 * time.Second
	burstFree  = 8 << 20
)

// burstThreshold is the free memory worth a release with live bytes in the heap: at least
// burstFree, and an eighth of the live heap, since the release's collection marks all of it (at
// 50,000 pods, ~300 MB live, that is the 32-37 MiB the load's bursts were released at before).
func burstThreshold(live uint64) uint64 { return max(burstFree, live/8) }

// releaseLoadMemory runs releaseAfterLoad, then releaseAfterBursts, for the command's
// supervisor, in the background.
func releaseLoadMemory(ctx context.Context, s loadWatcher) {
	release := unlessTyping(inputfirst.Operator.Active, debug.FreeOSMemory)
	go func() {
		releaseAfterLoad(ctx, s, time.After, loadQuiet, loadAtMost, release)
		tick := time.NewTicker(burstCheck)
		defer tick.Stop()
		threshold := func() uint64 { return burstThreshold(heapMetric(heapLiveMetric)) }
		releaseAfterBursts(ctx, s, tick.C, threshold, reclaimable, release)
	}()
}

// unlessTyping skips a release while the operator presses keys (internal/inputfirst): at
// 50,000 pods a release's collection and the return of hundreds of MiB took ~0.8 s of CPU in
// one burst at the end of the load, and the keys pressed then waited 150-300 ms for a core. The
// memory is not lost: the next quiet burst check (releaseAfterBursts) hands it back.
func unlessTyping(typing func() bool, release func()) func() {
	return func() {
		if !typing() {
			release()
		}
	}
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
// workbench holds 132 MB one and two minutes after start instead of 160 MB (the RSS
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
// change since the previous check and the heap holds at least threshold() bytes free that the
// runtime has not returned (free() reads it). The load goes on after the first table and after the
// first release: with Cilium the network policies list (kilobytes of JSON each), the watch
// seals a baseline per sandbox, the inventory cache is first written, and a reconnect lists
// everything again. Each burst leaves the heap's free pages up to the collector's goal (twice
// the live heap) with the process; at 50,000 pods the RSS grew from 343 MiB at the full table
// to 702 MiB after three idle minutes. Outside bursts the check finds little free and costs a
// wake-up per tick.
func releaseAfterBursts(ctx context.Context, s loadWatcher, tick <-chan time.Time, threshold, free func() uint64, release func()) {
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
		if quiet && free() >= threshold() {
			release()
		}
	}
}

// Runtime metrics the release reads: heap memory free and not returned to the system, memory
// in objects live or dead (until a collection sweeps them), and the heap the last collection
// found live.
const (
	heapFreeMetric    = "/memory/classes/heap/free:bytes"
	heapObjectsMetric = "/memory/classes/heap/objects:bytes"
	heapLiveMetric    = "/gc/heap/live:bytes"
)

// reclaimable is what a release would hand back: the heap's free memory plus what it allocated
// since the last collection found it live. An idle workbench's heap stays far below the
// collector's goal, so a burst's garbage waits for the runtime's two-minute forced collection
// before it counts as free; counted now, it is released at the next quiet check.
func reclaimable() uint64 {
	free, objects, live := heapMetric(heapFreeMetric), heapMetric(heapObjectsMetric), heapMetric(heapLiveMetric)
	return free + objects - min(objects, live)
}

// heapMetric reads one of the runtime's uint64 metrics (0 if this runtime lacks it).
func heapMetric(name string) uint64 {
	m := []metrics.Sample{{Name: name}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64()
}
