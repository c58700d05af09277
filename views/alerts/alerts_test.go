package alerts

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func sample() []state.Alert {
	return []state.Alert{
		{ID: 1, Time: t0, SandboxID: "docker:default/inspect-ctf-iabc123", Kind: state.AlertExec, Severity: catalog.SeverityMedium,
			Member: "inspect-ctf-iabc123-default-1", Summary: "exec sh as user 0 in inspect-ctf-iabc123-default-1 (arguments not recorded)", Cause: "user 0",
			Event: &sandbox.Activity{Time: t0, Kind: sandbox.ActExec, Member: "inspect-ctf-iabc123-default-1", Detail: "exec sh as 0 (arguments not recorded)"},
			Ack:   &state.Ack{Operator: "alice@range", Time: t0.Add(time.Minute)}, Hook: "ok"},
		{ID: 2, Time: t0.Add(2 * time.Minute), SandboxID: "docker:default/inspect-ctf-iabc123", Kind: state.AlertDrift, Severity: catalog.SeverityHigh,
			Rule: "CMP-N03", Member: "inspect-ctf-iabc123-default-1", Summary: "new HIGH CMP-N03: on network egress, which is not internal",
			Before: "(not in baseline of 2026-12-03T08:55:00Z, first seen)", After: "HIGH CMP-N03 on inspect-ctf-iabc123-default-1: on network egress (network egress Internal=false)",
			Event: &sandbox.Activity{Time: t0.Add(2 * time.Minute), Kind: sandbox.ActNetConnect, Member: "inspect-ctf-iabc123-default-1", Detail: "joined network egress"},
			Hook:  "failed: timed out after 10s"},
	}
}

func ctx(w, h int) *screen.Context {
	return &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: w, Height: h}
}

// The list is newest first, acknowledged alerts set apart, and the cursor alert's evidence
// (before, after, event, cause, hook and ack) spelled out below it.
func TestAlertsViewGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
	}{{"alerts-120x24", 120, 24}, {"alerts-80x24", 80, 24}} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(nil, nil)
			c := ctx(tc.w, tc.h)
			m.Update(c, Loaded{Alerts: sample()})
			goldentest.Assert(t, tc.name, m.View(c))
		})
	}
}

// The ack key acknowledges the alert under the cursor through the program's callback, and says
// so instead when it is acknowledged already; the selection is the alert's sandbox.
func TestAckKeyAndSelection(t *testing.T) {
	var acked []uint64
	m := New(nil, func(id uint64) tea.Cmd { acked = append(acked, id); return nil })
	c := ctx(120, 24)
	m.Update(c, Loaded{Alerts: sample()})
	if sel := m.Selection(); sel.Sandbox != "docker:default/inspect-ctf-iabc123" {
		t.Errorf("selection %+v", sel)
	}
	m.Update(c, tuitest.Key("A"))
	if len(acked) != 1 || acked[0] != 2 {
		t.Fatalf("acked %v, want the newest (2)", acked)
	}
	m.Update(c, tuitest.Key("j"))
	m.Update(c, tuitest.Key("A"))
	ops := c.TakeOps()
	if len(acked) != 1 || len(ops) == 0 || ops[len(ops)-1].Status == nil || !strings.Contains(*ops[len(ops)-1].Status, "acknowledged already by alice@range") {
		t.Errorf("second ack: acked %v, ops %+v", acked, ops)
	}
}

// An exec alert the program tied to the Inspect agent's command names it in the list and in the
// evidence; an alert without one is shown as before.
func TestAgentCallNamed(t *testing.T) {
	m := New(nil, nil)
	c := ctx(140, 24)
	call := `agent's exec "nmap -sV 10.0.0.5" (ran, sample 42/1)`
	m.Update(c, Loaded{Alerts: sample(), Agent: map[uint64]string{1: call}})
	m.Update(c, tuitest.Key("j")) // the exec alert (older, second in the list)
	v := m.View(c)
	goldentest.Assert(t, "alerts-agent-140x24", v)
	if !strings.Contains(v, "agent:  "+call) || !strings.Contains(v, "exec  docker:default/inspect-~ [agent] exec sh") {
		t.Errorf("the agent's call is not named:\n%s", v)
	}
	m.Update(c, tuitest.Key("k"))
	if v := m.View(c); strings.Contains(v, "agent:  ") {
		t.Errorf("the drift alert claims an agent's call:\n%s", v)
	}
}
