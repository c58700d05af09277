package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/watch"
)

// TestActivityNamesTheTeamOperator: a row shows who runs the action once a team identity does
// ("reverting · alice"); a standalone process's own action keeps its plain name.
func TestActivityNamesTheTeamOperator(t *testing.T) {
	for _, tc := range []struct {
		a    backends.Action
		who  action.Identity
		want string
	}{
		{backends.ActionRevert, action.Identity{Operator: "alice", Transport: action.TransportSSH}, "reverting · alice"},
		{backends.ActionTeardown, action.Identity{Operator: "me@host", Transport: action.TransportSocket}, "tearing down · me@host"},
		{backends.ActionRevert, action.Identity{Operator: "op@host", Transport: action.TransportStandalone}, "revert"},
		{backends.ActionSnapshot, action.Identity{}, "snapshot"},
	} {
		if got := Activity(tc.a, tc.who); got != tc.want {
			t.Errorf("Activity(%s, %+v) = %q; want %q", tc.a, tc.who, got, tc.want)
		}
	}
}

// TestAckRefusedForARoleThatMayNotAct: the session's authorizer (the daemon's roster) refuses a
// viewer's acknowledgement where the acknowledgement is made (watch.Ack), so the refusal is
// journaled with the identity and the alert stays open.
func TestAckRefusedForARoleThatMayNotAct(t *testing.T) {
	h := newHarness(t, harnessOpts{w: 120, h: 30,
		setupDB: func(db *state.DB) {
			if _, err := db.AddAlerts([]state.Alert{{Time: t0, SandboxID: "docker:local/agent-env-x1", Kind: state.AlertExec, Summary: "exec sh"}}); err != nil {
				t.Fatal(err)
			}
		},
		team: TeamOptions{AuthorizeAck: func(who action.Identity) error {
			return fmt.Errorf("%s is viewer, acknowledging an alert needs operator: %w", who.Operator, action.ErrForbidden)
		}}})
	h.key(":")
	h.typeText("alerts")
	h.key("enter")
	h.waitText("alerts  (1, 1 open")
	h.key("A")
	h.waitText("op@test is viewer")
	if open, _ := h.db.Alerts(state.AlertQuery{Open: true}); len(open) != 1 {
		t.Fatalf("a refused ack acknowledged the alert: %+v", open)
	}
	var out state.Entry
	for start := time.Now(); out.Seq == 0 && time.Since(start) < 5*time.Second; time.Sleep(10 * time.Millisecond) {
		js, _ := h.db.Journal(state.JournalQuery{})
		for _, e := range js {
			if e.Action == watch.ActionAck && e.Phase == state.PhaseOutcome {
				out = e
			}
		}
	}
	if out.Outcome != state.OutcomeRefused || out.Operator != "op@test" || out.Transport != action.TransportStandalone || !strings.Contains(out.Error, "viewer") {
		t.Errorf("refused ack journaled as %+v", out)
	}
}
