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
