package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// BenchmarkIdleFrame is the frame Bubble Tea asks for after a message that changed nothing on
// the fleet (a timer, another screen's result) with 10,000 rows: it must cost a comparison, not
// a rebuild (hack/benchfleet/FINDINGS.md, item 2; compare BenchmarkRender/sandboxes=10000).
func BenchmarkIdleFrame(b *testing.B) {
	m := fleetOf(10_000)
	_ = m.View()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

func TestNextChangeIsTheFirstVisibleAgeRollover(t *testing.T) {
	m := fleetOf(0)
	now := t0
	m.Now = func() time.Time { return now }
	old := backends.Sandbox{ID: "docker:a/old", Name: "old", Created: now.Add(-3*time.Hour - 10*time.Minute)}
	young := backends.Sandbox{ID: "docker:a/young", Name: "young", Created: now.Add(-5*time.Minute - 20*time.Second)}
	m.store.Put(NewRow("docker:a", old, false))
	if got, want := m.NextChange(now), old.Created.Add(4*time.Hour); !got.Equal(want) {
		t.Fatalf("one 3h row: next change %v, want the 4h rollover %v", got.Sub(now), want.Sub(now))
	}
	m.store.Put(NewRow("docker:a", young, false))
	// The 6m rollover, 40 s away, is drawn at the next 15 s slot of the clock (t0 is on one).
	if got, want := m.NextChange(now), now.Add(45*time.Second); !got.Equal(want) {
		t.Fatalf("with a 5m row: next change in %v, want %v", got.Sub(now), want.Sub(now))
	}
	young2 := backends.Sandbox{ID: "docker:a/young2", Name: "young2", Created: now.Add(-50 * time.Second)}
	m.store.Put(NewRow("docker:a", young2, false))
	if got, want := m.NextChange(now), now.Add(time.Second); !got.Equal(want) {
		t.Fatalf("with a 50s row: next change in %v, want %v (seconds are exact)", got.Sub(now), want.Sub(now))
	}
	m.store.Remove(young2.ID)
	m.SetHealthAll([]supervisor.Health{{Backend: "docker:b", State: supervisor.StateReconnecting, NextRetry: now.Add(2200 * time.Millisecond)}})
	if got, want := m.NextChange(now), now.Add(700*time.Millisecond); !got.Equal(want) {
		t.Fatalf("retry in 2s: next change in %v, want %v (when it shows 1s)", got.Sub(now), want.Sub(now))
	}
}

func TestViewIsRebuiltWhenWhatItShowsChanges(t *testing.T) {
	m := fleetOf(3)
	now := t0
	m.Now = func() time.Time { return now }
	first := m.View()
	if m.View() != first {
		t.Fatal("an unchanged frame differs")
	}
	steps := []struct {
		name   string
		change func()
		want   func() string
	}{
		{"a row is added", func() {
			m.store.Put(NewRow("docker:a", backends.Sandbox{ID: "docker:a/new-row", Name: "new-row", Created: now}, false))
		}, func() string { return "new-row" }},
		{"the health line changes", func() {
			m.SetHealthAll([]supervisor.Health{{Backend: "docker:zz", State: supervisor.StateConnected}})
		}, func() string { return "docker:zz" }},
		{"a key moves the cursor", func() {
			m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
		}, func() string { return m.Selected().SB.ID }},
		{"the status changes", func() { m.Status = "hello status" }, func() string { return "hello status" }},
		{"the clock rolls an age over", func() { now = now.Add(time.Minute) }, func() string { return "1m" }},
		{"a binding's guard (the footer)", func() {
			m.Keys.Guard(keymap.Snapshot, func(keymap.Selection) string { return "snapshot: actions are unavailable" })
		}, func() string { return "snapshot" }},
		{"the activity of a visible row", func() { m.Activity = func(string) string { return "snapshot" } }, func() string { return "snapshot" }},
	}
	for _, s := range steps {
		before := m.View()
		s.change()
		after := m.View()
		if after == before || !strings.Contains(after, s.want()) {
			t.Fatalf("%s: frame not rebuilt (want %q in it):\n%s", s.name, s.want(), after)
		}
	}
}

// A table of rows created a few seconds apart (a fleet filled over minutes) wakes the program
// at most four times a minute, and no row's age is shown more than ageSlot late.
func TestMinuteAgesShareWakeUps(t *testing.T) {
	m := fleetOf(0)
	now := t0.Add(7 * time.Second)
	m.Now = func() time.Time { return now }
	var created []time.Time
	for i := range 30 { // all visible
		c := now.Add(-3*time.Minute - time.Duration(i)*4300*time.Millisecond)
		created = append(created, c)
		m.store.Put(NewRow("docker:a", backends.Sandbox{ID: fmt.Sprintf("docker:a/s%02d", i), Name: fmt.Sprintf("s%02d", i), Created: c}, false))
	}
	start, wakes := now, 0
	for now.Sub(start) < 10*time.Minute {
		next := m.NextChange(now)
		for _, c := range created { // every rollover since the last wake is drawn by this one
			if r := sandbox.AgeChanges(now, c); !r.After(next) && next.Sub(r) > ageSlot {
				t.Fatalf("age of a row created at %v rolls over at %v but is drawn at %v", c, r, next)
			}
		}
		now = next
		wakes++
	}
	if wakes > 4*10+1 { // the last one may lie past the 10 minutes
		t.Fatalf("%d wake-ups in 10 minutes; want at most 41", wakes)
	}
}
