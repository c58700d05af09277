package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/state"
)

// journalFixture writes entries with pinned times so the journal screen renders deterministically.
func journalFixture(db *state.DB) {
	id := "docker:test/inspect-ctf-web-iabc123"
	for i, e := range []state.Entry{
		{Action: "snapshot", Target: id, Phase: state.PhaseIntent, Params: map[string]string{"name": "before-fix", "pause": "true"}},
		{Action: "snapshot", Target: id, Phase: state.PhaseOutcome, Intent: 1, Outcome: state.OutcomeOK},
		{Action: "teardown", Target: "docker:test/inspect-ctf-pwn-idef456", Phase: state.PhaseIntent},
		{Action: "teardown", Target: "docker:test/inspect-ctf-pwn-idef456", Phase: state.PhaseOutcome, Intent: 3, Outcome: state.OutcomeFailed, Error: "engine said no: disk full"},
	} {
		e.Time = t0.Add(time.Duration(i) * time.Second)
		e.Operator = "op@host"
		if _, err := db.Append(e); err != nil {
			panic(err)
		}
	}
}

func TestGoldenViews(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}}
	tests := []struct {
		name  string
		ro    bool
		drive func(h *harness) string
	}{
		{"fleet", false, func(h *harness) string { return h.waitText("inspect-intercode") }},
		{"readonly", true, func(h *harness) string { return h.waitText("READ-ONLY") }},
		{"help", false, func(h *harness) string { h.key("?"); return h.waitText("dark assumed") }},
		{"detail", false, func(h *harness) string {
			h.key("j", "enter")
			return h.waitFor("detail with stats and journal", func(s string) bool {
				return strings.Contains(s, "MEMBERS (2)") && strings.Contains(s, "cpu ") && !strings.Contains(s, "loading")
			})
		}},
		{"journal", false, func(h *harness) string { h.key("@"); return h.waitText("disk full") }},
		{"teardown-dialog", false, func(h *harness) string { h.key("j", "D"); return h.waitText("type inspect-ctf-web-iabc123 to confirm") }},
		{"revert-confirm", false, func(h *harness) string {
			h.key("j", "s", "enter")
			h.waitText("done: snapshot auto-1")
			h.key("r")
			h.waitText("to which snapshot")
			h.key("enter")
			return h.waitText("Changes since the snapshot are lost")
		}},
		{"tasks", false, func(h *harness) string {
			h.key("j", "s")
			h.typeText("golden")
			h.key("enter")
			h.waitText("done: snapshot golden")
			h.key("t")
			return h.waitText("tasks  (0 running, 1 recent)")
		}},
		{"command", false, func(h *harness) string {
			h.key(":")
			h.typeText("sort age")
			return h.waitText(":sort age_")
		}},
		{"list", false, func(h *harness) string {
			h.key("j", "p")
			h.waitText("Escape probe")
			h.key("esc", ":")
			h.typeText("probes")
			h.key("enter")
			return h.waitText("never probed")
		}},
		{"fleet-expanded", false, func(h *harness) string {
			h.key("j", "e")
			return h.waitText("- svc1  inspect-ctf-web-iabc123-svc1-1")
		}},
		{"fleet-grouped", false, func(h *harness) string {
			h.key("b")
			return h.waitText("- k8s:kwok (1)")
		}},
	}
	for _, tc := range tests {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s-%dx%d", tc.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, harnessOpts{w: sz[0], h: sz[1], readOnly: tc.ro, setupDB: journalFixture})
				golden(t, name, tc.drive(h))
			})
		}
	}
}

// TestGoldenSixteenColours keeps the escape sequences: the dark16 theme must stay within the 16
// ANSI colours every SSH client and tmux renders.
func TestGoldenSixteenColours(t *testing.T) {
	h := newHarness(t, harnessOpts{theme: "dark16", setupDB: journalFixture})
	h.key("j", "space")
	h.waitText("marked:1")
	raw := h.rawFrame()
	if strings.Contains(raw, "38;5;") || strings.Contains(raw, "48;5;") || strings.Contains(raw, "38;2;") {
		t.Errorf("dark16 uses a 256-colour or true-colour sequence:\n%q", raw)
	}
	golden(t, "fleet-dark16-80x24", raw)
}

func TestGoldenTooSmall(t *testing.T) {
	h := newHarness(t, harnessOpts{w: 50, h: 10})
	golden(t, "too-small-50x10", h.waitText("terminal too small"))
}
