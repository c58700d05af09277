package heapcap

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// BenchmarkLoadCollections replays the shape of a fleet's first load under the workbench's limit
// (Default, floor 360 MiB): objects of ~8 KB decoded one after another, one in 25 kept (the slim
// copy the cache holds), 40,000 of them (~320 MB decoded, ~13 MB kept; the 50,000-pod load
// decodes several times that). It reports the collections per load (ns/op is the load's time), at the default
// pace and at LoadPercent: the figure the relaxed pace lowered (issue 18: 42-45 collections
// while 50,000 pods listed, 10-15 with it).
func BenchmarkLoadCollections(b *testing.B) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(Default.Floor))
	b.Setenv("GOGC", "")
	for _, tc := range []struct {
		name    string
		percent int
	}{{"default", 100}, {"load", LoadPercent}} {
		b.Run(tc.name, func(b *testing.B) {
			var cycles float64
			for b.Loop() {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				release := func() {}
				if tc.percent != 100 {
					release = Relax(tc.percent)
				}
				load()
				release()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				cycles += float64(after.NumGC - before.NumGC)
			}
			b.ReportMetric(cycles/float64(b.N), "collections/load")
		})
	}
}

// kept holds what a load keeps, as the informer caches do.
var kept [][]byte

func load() {
	kept = kept[:0]
	for i := range 40_000 {
		decoded := make([]byte, 8<<10)
		decoded[0] = byte(i)
		if i%25 == 0 {
			kept = append(kept, decoded[:320:320])
		}
	}
}
