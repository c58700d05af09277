package heapcap

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitIsFactorTimesLiveAboveTheFloor(t *testing.T) {
	p := Policy{Floor: 400 << 20, Factor: 1.5}
	for _, tc := range []struct {
		live uint64
		want int64
	}{
		{0, 400 << 20},
		{100 << 20, 400 << 20},
		{266 << 20, 400 << 20},
		{300 << 20, 450 << 20},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := p.Limit(tc.live); got != tc.want {
			t.Errorf("Limit(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

// Runs before TestStartFollowsTheLiveHeap, whose limit keeps following the heap once started.
func TestOperatorsLimitIsKept(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	before := debug.SetMemoryLimit(-1)
	Start(Default)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit changed to %d with GOMEMLIMIT set", got)
	}
}

// After a collection the limit follows the live heap: holding 64 MB live with a 16 MB floor
// and a factor of 2 gives about 128 MB; an operator's GOMEMLIMIT is left alone.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(math.MaxInt64)
	Start(Policy{Floor: 16 << 20, Factor: 2})
	keep := make([]byte, 64<<20)
	for i := range keep {
		keep[i] = 1
	}
	deadline := time.Now().Add(5 * time.Second)
	var got int64
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs on its own goroutine
		if got = debug.SetMemoryLimit(-1); got >= 128<<20 && got < 160<<20 {
			break
		}
	}
	runtime.KeepAlive(keep)
	if got < 128<<20 || got >= 160<<20 {
		t.Fatalf("limit %d MB with 64 MB live, want about 128", got>>20)
	}
}

func TestRelaxNestsAndRestoresThePace(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(512 << 20))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	pct := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	load := Relax(LoadPercent)
	if got := pct(); got != LoadPercent {
		t.Fatalf("pace %d while loading, want %d", got, LoadPercent)
	}
	pause := Relax(-1) // the cache's decode within the load
	if got := pct(); got != -1 {
		t.Fatalf("pace %d with a pause held, want off", got)
	}
	load() // the load ends first: the pause still holds
	if got := pct(); got != -1 {
		t.Fatalf("pace %d after the load ended inside a pause, want off", got)
	}
	load() // twice: no effect
	pause()
	if got := pct(); got != 100 {
		t.Fatalf("pace %d after every hold ended, want the 100 it was", got)
	}
}

func TestRelaxLeavesTheOperatorsPaceAndAnUnboundedHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	pct := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	t.Setenv("GOGC", "150")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(512 << 20))
	end := Relax(LoadPercent)
	if got := pct(); got != 100 {
		t.Errorf("pace %d with GOGC set, want it left at 100", got)
	}
	end()

	t.Setenv("GOGC", "")
	debug.SetMemoryLimit(math.MaxInt64) // nothing would bound the relaxed heap
	end = Relax(LoadPercent)
	if got := pct(); got != 100 {
		t.Errorf("pace %d with no memory limit, want it left at 100", got)
	}
	end()
}
