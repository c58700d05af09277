package state

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// BenchmarkFirstBaselines25k is the containment watch's first step at a 50,000-pod cluster:
// 25,000 baselines (~2 KB each) sealed into a fresh state file (once in one transaction). The file
// grew past its mapping mid-commit and bbolt copied every dirty node out of the old one first:
// 109 MB of heap at once, the peak of the whole load. peak-MB is the largest heap in
// use seen during the write (sampled every millisecond).
func BenchmarkFirstBaselines25k(b *testing.B) {
	const n = 25_000
	bs := make([]Baseline, n)
	for i := range bs {
		id := fmt.Sprintf("k8s:envtest/rk%06d/agent-env-rk%06d", i, i)
		bs[i] = Baseline{SandboxID: id, Recorded: time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC), Reason: "first seen"}
		for j := range 12 {
			bs[i].Findings = append(bs[i].Findings, sandbox.Finding{RuleID: fmt.Sprintf("K8S-H%02d", j), Severity: catalog.SeverityHigh,
				Member: fmt.Sprintf("agent-env-rk%06d-default-0", i), Message: "the container may gain privileges it was not started with (allowPrivilegeEscalation)"})
		}
	}
	// The watch hands them over in map order.
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	var peak uint64
	for b.Loop() {
		b.StopTimer()
		db, err := Open(filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		stop := make(chan struct{})
		done := make(chan uint64)
		go func() {
			var m runtime.MemStats
			high := uint64(0)
			for {
				runtime.ReadMemStats(&m)
				high = max(high, m.HeapAlloc)
				select {
				case <-stop:
					done <- high
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		b.StartTimer()
		if err := db.PutBaselines(bs); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		close(stop)
		peak = max(peak, <-done-base.HeapAlloc)
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
}
