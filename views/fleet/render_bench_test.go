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
				m.lines = nil  // every line built: BenchmarkRenderCursorMove measures the line cache
				_ = m.render() // the frame itself; BenchmarkIdleFrame measures the cached path
			}
		})
	}
}

// BenchmarkRenderCursorMove measures the frame after a one-row cursor move, the commonest key:
// two lines change, the rest come from the line cache.
func BenchmarkRenderCursorMove(b *testing.B) {
	m := fleetOf(1_000)
	_ = m.render()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.move(1 - 2*(i%2))
		_ = m.render()
	}
}

// The line cache never shows a stale line: after cursor moves, marks, a row's update, a resize
// and the clock passing a minute, every frame is what a model without a cache renders.
func TestLineCacheFramesEqualFreshOnes(t *testing.T) {
	m := fleetOf(300)
	now := t0
	m.Now = func() time.Time { return now }
	steps := []func(){
		func() { m.move(1) },
		func() { m.move(-3) },
		func() { m.marked[m.Selected().SB.ID] = true },
		func() {
			r := m.Selected()
			s := r.SB
			s.Status = "exited"
			m.store.Put(NewRow(r.Backend, s, false))
		},
		func() { m.expanded[m.Selected().SB.ID] = true },
		func() { m.SetSize(100, 30) },
		func() { now = now.Add(time.Minute) },
		func() { m.move(25) },
	}
	for i, step := range steps {
		step()
		cached := m.render()
		keep := m.lines
		m.lines = nil
		fresh := m.render()
		m.lines = keep
		if cached != fresh {
			t.Fatalf("step %d: cached frame differs from a fresh one:\n%s\n---\n%s", i, cached, fresh)
		}
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
