package probe_test

import (
	"context"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/facts"
)

// BenchmarkProbeBinarySize reports the static, stripped probe's size (goal: < 5 MB).
func BenchmarkProbeBinarySize(b *testing.B) {
	_, bin := probeBinary(b)
	for range b.N {
		_ = len(bin)
	}
	b.ReportMetric(float64(len(bin)), "bytes")
	b.ReportMetric(float64(len(bin))/(1<<20), "MiB")
}

// BenchmarkProbeInContainer measures a whole probe of a running container — copy, verify, run,
// collect, remove — and the probe's own wall time inside it (goal: < 1.5 s).
func BenchmarkProbeInContainer(b *testing.B) {
	be := dockerBackend(b)
	_, bin := probeBinary(b)
	project := "rkprobe-bench-" + dockertest.RunID
	dockertest.Project(b, project, dockertest.Service{Name: "default"})
	ctx := context.Background()
	var inside time.Duration
	b.ResetTimer()
	for range b.N {
		res, err := probe.RunWith(ctx, be, be, be.SandboxID(project), "default", bin, facts.Targets{}, probe.Options{})
		if err != nil || res.Facts == nil {
			b.Fatalf("probe: %v %s", err, res.CouldNotProbe)
		}
		inside += time.Duration(res.Facts.DurationMS) * time.Millisecond
	}
	b.ReportMetric(float64(inside.Milliseconds())/float64(b.N), "probe-ms/op")
}
