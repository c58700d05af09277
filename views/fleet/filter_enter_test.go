package fleet

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

func typeFilter(m Model, text string) Model {
	m, _ = m.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	for _, r := range text {
		m, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)}) // faster than the debounce: its ticks are dropped
	}
	return m
}

// BenchmarkFilterEnterToFrame10k: the operator types a filter faster than the debounce and
// presses Enter; one op is Enter's Update and the frame after it, which must show the filtered
// table (filter-to-screen <= 50 ms; before, Enter only closed the input and the
// filter waited for FilterDebounce, 60 ms, then a computation in a command).
func BenchmarkFilterEnterToFrame10k(b *testing.B) {
	m := benchModel(b, 10_000)
	filters := []string{"task012", "name~i00001", "!task0", "task49"}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	defer func() { b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
	for i := range b.N {
		b.StopTimer()
		f := filters[i%len(filters)]
		typed := typeFilter(m, f)
		b.StartTimer()
		c0 := cpuTime()
		typed, cmd := typed.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		v := typed.View()
		cpu += cpuTime() - c0
		b.StopTimer()
		if cmd != nil || !strings.Contains(v, "filter:"+f) || typed.Store().Len() == 10_000 {
			b.Fatalf("Enter did not put %q in force in the next frame (cmd %v, %d rows)", f, cmd != nil, typed.Store().Len())
		}
		b.StartTimer()
	}
}

func TestEnterAppliesTheTypedFilterAtOnce(t *testing.T) {
	m := benchModel(t, 300)
	m = typeFilter(m, "task001")
	if m.Store().Len() != 300 {
		t.Fatalf("the filter applied while typing, before the debounce: %d rows", m.Store().Len())
	}
	m, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd != nil {
		t.Fatal("Enter left the filter to a command")
	}
	for i := range m.Store().Len() {
		if m.Store().At(i).SB.Task != "task001" {
			t.Fatalf("row %d (%s) does not match the filter", i, m.Store().At(i).SB.Task)
		}
	}
	if m.Store().Len() == 0 || m.Filtering() {
		t.Fatalf("after Enter: %d rows, still typing %v", m.Store().Len(), m.Filtering())
	}
	// A debounce tick from the typing, arriving late, changes nothing.
	before := m.Store().Len()
	m, _ = m.Update(filterTickMsg{gen: m.gen - 1})
	if m.Store().Len() != before {
		t.Fatal("a stale debounce tick recomputed the filter")
	}
}
