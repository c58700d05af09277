package journal

import (
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

func TestIntentsWithoutOutcomeAreFlaggedInterrupted(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	es := []state.Entry{ // newest first, as Load returns them
		{Seq: 5, Time: t0.Add(5 * time.Second), Action: "snapshot", Target: "docker:a/busy", Phase: state.PhaseIntent},
		{Seq: 4, Time: t0.Add(4 * time.Second), Action: "revert", Target: "docker:a/crashed", Phase: state.PhaseIntent},
		{Seq: 2, Time: t0.Add(2 * time.Second), Action: "teardown", Target: "docker:a/done", Phase: state.PhaseOutcome, Intent: 1, Outcome: state.OutcomeOK},
		{Seq: 1, Time: t0.Add(1 * time.Second), Action: "teardown", Target: "docker:a/done", Phase: state.PhaseIntent},
	}
	m := New(nil, "")
	m.Running = func(id string) bool { return id == "docker:a/busy" }
	m.SetEntries(es)
	if !m.IsInterrupted(4) || m.IsInterrupted(5) || m.IsInterrupted(1) || m.IsInterrupted(2) {
		t.Fatalf("interrupted: 4=%v (no outcome) 5=%v (running) 1=%v (has an outcome) 2=%v", m.IsInterrupted(4), m.IsInterrupted(5), m.IsInterrupted(1), m.IsInterrupted(2))
	}
	m.Err = ""
	m.cursor = 1 // the crashed revert: its explanation is spelled out
	v := m.View(&screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 120, Height: 20})
	var revert, busy, done string
	for _, l := range strings.Split(v, "\n") {
		switch {
		case strings.Contains(l, "docker:a/crashed") && strings.Contains(l, "12-03"):
			revert = l
		case strings.Contains(l, "docker:a/busy"):
			busy = l
		case strings.Contains(l, "docker:a/done") && strings.Contains(l, "    1 "):
			done = l
		}
	}
	if !strings.Contains(revert, Interrupted) || !strings.Contains(busy, "intent") || strings.Contains(busy, Interrupted) || !strings.Contains(done, "intent") {
		t.Fatalf("rows: crashed %q, running %q, completed %q\n%s", revert, busy, done, v)
	}
	if !strings.Contains(v, "rangekeeper recover") {
		t.Fatalf("the selected interrupted entry does not say how to recover:\n%s", v)
	}
}
