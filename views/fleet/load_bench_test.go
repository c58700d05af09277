package fleet

import (
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/supervisor"
)

// BenchmarkLoadCached10k paints a 10,000-row inventory cache: rows built, indexed and the first
// frame rendered (hack/benchfleet/FINDINGS.md, item 3). "put-each" is the former path (a sorted insert
// per row, O(n²) moves), kept as the reference; "bulk" is LoadCached (one sort).
func BenchmarkLoadCached10k(b *testing.B) {
	const n = 10_000
	sbs := make([]*Row, n)
	for i := range sbs {
		sbs[i] = NewRow("docker:bench", benchSandbox(i), true)
	}
	for _, c := range []struct {
		name string
		load func(m *Model)
	}{
		{"put-each", func(m *Model) {
			for _, r := range sbs {
				m.store.Put(r)
			}
		}},
		{"bulk", func(m *Model) { m.LoadCached("docker:bench", sbs) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				m := benchModel(b, 0)
				c.load(&m)
				if m.store.Len() != n {
					b.Fatalf("%d rows shown", m.store.Len())
				}
				_ = m.View()
			}
		})
	}
}

func TestLoadCachedKeepsTheRowsOfABackendThatAnsweredFirst(t *testing.T) {
	m := fleetOf(0)
	live := NewRow("docker:a", sb("docker:a", 1), false)
	m.store.Put(live)
	m.SetHealthAll([]supervisor.Health{{Backend: "docker:a", State: supervisor.StateConnected}})
	m.LoadCached("docker:a", []*Row{NewRow("docker:a", sb("docker:a", 2), true)})
	if m.store.Total() != 1 || m.store.At(0) != live {
		t.Fatalf("the cache replaced or joined the live rows of a connected backend: %d rows", m.store.Total())
	}
	m.LoadCached("docker:b", []*Row{NewRow("docker:b", sb("docker:b", 3), true), NewRow("docker:b", sb("docker:b", 2), true)})
	if m.store.Len() != 3 || m.StaleReason("docker:b") == "" {
		t.Fatalf("cached rows of a backend still connecting: %d shown, stale reason %q", m.store.Len(), m.StaleReason("docker:b"))
	}
	for i := 1; i < m.store.Len(); i++ {
		if !m.store.Order().Less(m.store.At(i-1), m.store.At(i)) {
			t.Fatalf("bulk-loaded index out of order at %d", i)
		}
	}
}
