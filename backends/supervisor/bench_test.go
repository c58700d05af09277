package supervisor

import (
	"fmt"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
)

// BenchmarkEventBurst measures a burst the consumer (the TUI) drains once per frame: 10,000
// upserts of 500 sandboxes while 25,000 sandboxes are known. updates/drain is what the consumer
// then has to apply: every event before folding, one per changed sandbox with it.
func BenchmarkEventBurst(b *testing.B) {
	bk := blocked{name: "k8s:bench"}
	s := New([]backends.Backend{bk}, DefaultBackoff)
	fleet := make([]backends.Sandbox, 25_000)
	for i := range fleet {
		fleet[i] = sandbox(bk.name, fmt.Sprintf("rk%06d", i))
	}
	s.apply(bk, backends.Event{Type: backends.EventReset, Sandboxes: fleet})
	s.Drain()
	var drained int
	b.ReportAllocs()
	for b.Loop() {
		for i := range 10_000 {
			s.apply(bk, backends.Event{Type: backends.EventUpsert, Sandbox: fleet[i%500]})
		}
		drained = len(s.Drain())
	}
	b.ReportMetric(float64(drained), "updates/drain")
}

// BenchmarkReset25k measures applying one backend's re-list of 25,000 sandboxes (a reconnect)
// while another backend holds 25,000 more.
func BenchmarkReset25k(b *testing.B) {
	k8s, other := blocked{name: "k8s:bench"}, blocked{name: "docker:other"}
	s := New([]backends.Backend{k8s, other}, DefaultBackoff)
	mk := func(backend string) []backends.Sandbox {
		out := make([]backends.Sandbox, 25_000)
		for i := range out {
			out[i] = sandbox(backend, fmt.Sprintf("s%06d", i))
		}
		return out
	}
	s.apply(other, backends.Event{Type: backends.EventReset, Sandboxes: mk(other.name)})
	fleet := mk(k8s.name)
	b.ReportAllocs()
	for b.Loop() {
		s.apply(k8s, backends.Event{Type: backends.EventReset, Sandboxes: fleet})
		s.Drain()
	}
}
