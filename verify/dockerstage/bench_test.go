package dockerstage_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/verify"
)

// BenchmarkVerify3Services times a whole run of the three-service hardened spec — lint, stand
// up (with verify's canaries and controls), wait, arm, probe, evidence, teardown — and reports
// the median of each step and of the total, so the share of each step can be read off. Run with
// -benchtime=Nx; each iteration takes tens of seconds.
func BenchmarkVerify3Services(b *testing.B) {
	d := deps(b)
	steps := map[string][]float64{}
	var totals []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := options(b, "hardened.yaml", nil)
		o.Expect = "T0.H1.N2"
		start := time.Now()
		res := verify.Run(context.Background(), o, d)
		totals = append(totals, float64(time.Since(start).Milliseconds()))
		if res.Exit != verify.ExitHolds || !res.Teardown.Remaining.Zero() {
			b.Fatalf("exit %d (%s), teardown %+v", res.Exit, res.Reason, res.Teardown)
		}
		for _, s := range res.Steps {
			steps[s.Name] = append(steps[s.Name], float64(s.DurationMS))
		}
	}
	b.StopTimer()
	total := median(totals)
	b.ReportMetric(total, "ms-total")
	for name, ms := range steps {
		m := median(ms)
		b.ReportMetric(m, "ms-"+name)
		b.ReportMetric(100*m/total, "%-"+name)
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
