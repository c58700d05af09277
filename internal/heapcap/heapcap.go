// Package heapcap keeps a large heap from doubling. Go's collector lets the heap grow to twice
// what is live before it collects again (GOGC=100): cheap for a small heap, but at 50,000 pods
// the workbench holds ~230 MB live and its resident memory peaked at 570-800 MB while a fleet
// loaded. Start sets a soft memory limit after each collection: Factor times the live
// heap, never below Floor, so a small heap keeps the default pacing and a large one is allowed
// half its size of garbage rather than all of it, at the cost of more frequent collections.
package heapcap

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Policy is the limit's shape.
type Policy struct {
	Floor  int64   // bytes: the limit never goes below this
	Factor float64 // the limit is Factor × the live heap above Floor
}

// Default is the workbench's policy: up to 240 MiB live the heap may reach 360 MiB (the default
// pacing for anything under 180 MiB); beyond, one and a half times what is live. At 50,000 pods
// (~230 MB live) resident memory peaked at 445-453 MiB with it, 585-600 MiB without.
var Default = Policy{Floor: 360 << 20, Factor: 1.5}

// Limit is the memory limit for a live heap of live bytes.
func (p Policy) Limit(live uint64) int64 {
	l := float64(live) * p.Factor
	if l >= math.MaxInt64 { // beyond int64: the conversion below would be undefined
		return math.MaxInt64
	}
	return max(p.Floor, int64(l))
}

var once sync.Once

// Start applies p after every collection from now on. It does nothing when the operator set
// GOMEMLIMIT (theirs is kept), and nothing the second time.
func Start(p Policy) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	once.Do(func() {
		debug.SetMemoryLimit(p.Floor)
		arm(p)
	})
}

// sentinel is allocated for each cycle; its cleanup runs once a collection has found it
// unreachable, that is after every cycle, and never while the program allocates nothing (an
// idle workbench is not woken).
type sentinel struct{ _ *int } // a pointer: not batched by the tiny allocator, whose blocks outlive cycles

func arm(p Policy) {
	s := &sentinel{}
	runtime.AddCleanup(s, func(p Policy) {
		debug.SetMemoryLimit(p.Limit(liveHeap()))
		arm(p)
	}, p)
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// liveHeap is the heap the last collection found live (only the cleanup goroutine reads it).
func liveHeap() uint64 {
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return liveSample[0].Value.Uint64()
}
