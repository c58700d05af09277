package tui

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
)

// BenchmarkDemoFleetRSS10k runs the real program (teatest, real supervisor, 120x40, the FPS
// the workbench uses) over the demo's 10,000 simulated Kubernetes releases churning one
// every 2 s, waits for the full table, idles, and reports the process's resident set
// (VmRSS, the test binary included) and the live heap after a GC (RSS < 150 MB).
// Run it with -benchtime=1x; add -memprofile for the heap profile.
func BenchmarkDemoFleetRSS10k(b *testing.B) {
	for range b.N {
		sim := simfleet.New("simulated", backends.KindKubernetes, 10_000, 2*time.Second)
		h := newHarness(b, harnessOpts{w: 120, h: 40, tick: time.Second, fps: FPS, extra: []backends.Backend{sim}})
		h.waitText("10004/10004 sandboxes")
		time.Sleep(5 * time.Second) // idle, with churn
		b.ReportMetric(float64(vmRSS())/(1<<20), "rss-MB")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MB")
		b.ReportMetric(float64(ms.Sys)/(1<<20), "go-sys-MB")
	}
}

// vmRSS is the process's resident set in bytes (Linux), 0 when unknown.
func vmRSS() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
