package fleet

import (
	"fmt"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

func fleetOf(n int) Model {
	m := New(keymap.Default(), theme.Dark256())
	m.Now = func() time.Time { return t0 }
	for i := 0; i < n; i++ {
		m.store.Put(NewRow("docker:a", sb("docker:a", i), false))
	}
	m.SetSize(120, 40)
	m.move(n / 2) // a cursor in the middle: the worst case for any scan from the top
	return m
}

// BenchmarkRender measures building one frame of the fleet screen; the cost must not grow with
// the fleet.
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		b.Run(fmt.Sprintf("sandboxes=%d", n), func(b *testing.B) {
			m := fleetOf(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = m.render() // the frame itself; BenchmarkIdleFrame measures the cached path
			}
		})
	}
}

func TestRenderShowsOnlyTheWindow(t *testing.T) {
	m := fleetOf(5000)
	out := m.View()
	lines := 0
	for _, c := range out {
		if c == '\n' {
			lines++
		}
	}
	if lines != 39 {
		t.Fatalf("rendered %d lines; want exactly the 40-line screen", lines+1)
	}
	sel := m.Selected()
	if sel == nil || m.store.IndexOf(sel.SB.ID) != 2500 {
		t.Fatalf("cursor row = %v", sel)
	}
}
