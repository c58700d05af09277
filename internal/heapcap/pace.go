package heapcap

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// LoadPercent is the collector's pace while a fleet loads (GOGC=400): the heap may grow to five
// times what is live between collections, within the soft memory limit. Listing 50,000 pods
// decodes ~2 GB of objects of which a few percent stay; at the default pace the live heap,
// growing from nothing, was marked 42 times in 8 s (3.6 s of CPU on two cores shared with the
// API server); at this pace, 10-11 times (0.9-1.1 s).
const LoadPercent = 400

// pace holds the relaxations in force: each Relax adds one, its release removes it.
var pace struct {
	mu    sync.Mutex
	holds map[*int]int // the percent each open hold asks for
	base  int          // the pace before the first open hold
}

// Relax sets the collector's pace to percent (as GOGC; -1: collect only at the memory limit)
// until release is called, and returns release (safe to call more than once). Holds nest: the
// most relaxed open hold applies, and the pace returns to what it was when the last is released.
// It does nothing when the operator set GOGC, or when no memory limit is in force to bound the
// heap meanwhile.
func Relax(percent int) (release func()) {
	if os.Getenv("GOGC") != "" || debug.SetMemoryLimit(-1) == math.MaxInt64 {
		return func() {}
	}
	pace.mu.Lock()
	defer pace.mu.Unlock()
	if pace.holds == nil {
		pace.holds = map[*int]int{}
	}
	h := new(int)
	if len(pace.holds) == 0 {
		pace.base = debug.SetGCPercent(percent)
	}
	pace.holds[h] = percent
	debug.SetGCPercent(mostRelaxed(pace.holds))
	var once sync.Once
	return func() {
		once.Do(func() {
			pace.mu.Lock()
			defer pace.mu.Unlock()
			delete(pace.holds, h)
			if len(pace.holds) == 0 {
				debug.SetGCPercent(pace.base)
				return
			}
			debug.SetGCPercent(mostRelaxed(pace.holds))
		})
	}
}

// mostRelaxed is the pace that lets the heap grow most: off (-1) before any percent.
func mostRelaxed(holds map[*int]int) int {
	out := 0
	for _, p := range holds {
		if p < 0 {
			return -1
		}
		out = max(out, p)
	}
	return out
}
