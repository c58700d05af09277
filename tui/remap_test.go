package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// TestRemappedCancelInEveryHintAndOnEveryScreen remaps cancel to X: every hint that names the
// cancel key says X (never x), and X cancels the running action on every screen.
func TestRemappedCancelInEveryHintAndOnEveryScreen(t *testing.T) {
	km, err := Keys(map[string]string{"cancel": "X"})
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{}) // never opened: only cancellation ends a snapshot
	started := make(chan string, 16)
	h := newHarness(t, harnessOpts{w: 120, h: 40, keys: km, setup: func(d *fakeBackend) { d.gate, d.started = gate, started }})
	oldKey := func(f string) bool { return strings.Contains(f, "x cancel") }

	// Hints: the progress line on every screen that shows it, the task panel's footer, the help.
	h.key("j", "s", "enter")
	<-started
	for _, s := range []struct {
		name, open, ready, hint string
	}{
		{"fleet", "", "/4 sandboxes", "(X cancels, t tasks)"},
		{"detail", "enter", "MEMBERS (2)", "(X cancels, t tasks)"},
		{"journal", "@", "journal: docker:test/inspect-ctf-web-iabc123", "(X cancels, t tasks)"},
		{"tasks", "t", "tasks  (1 running", "X cancel the selected task's action"},
		{"help", "?", "rangekeeper keys", "X             cancel action"},
	} {
		if s.open != "" {
			h.key(s.open)
		}
		h.waitText(s.ready)
		f := h.waitText(s.hint)
		if oldKey(f) {
			t.Errorf("%s: a hint still names x:\n%s", s.name, f)
		}
	}
	h.key("esc", "esc", "esc", "esc")
	h.waitFor("the fleet", func(f string) bool { return strings.Contains(f, "/4 sandboxes") })
	h.key("x") // the old key does nothing now
	time.Sleep(100 * time.Millisecond)
	if _, busy := h.layer.Busy(webID); !busy {
		t.Fatal("x still cancels after cancel was remapped to X")
	}
	h.key("X")
	h.waitText("snapshot cancelled: inspect-ctf-web-iabc123")
	h.key(":")
	h.typeText("snapshots")
	h.key("enter")
	h.waitText("no snapshots recorded")
	h.key("esc")

	// Works: an action runs on the web sandbox (started through the action layer, as another
	// operator's would be); on each screen X cancels it.
	for _, s := range []struct {
		name   string
		open   func()
		ready  string
		closeN int // how many back keys return to the fleet
	}{
		{"fleet", func() {}, "/4 sandboxes", 0},
		{"detail", func() { h.key("enter") }, "MEMBERS (2)", 1},
		{"journal", func() { h.key("@") }, "by op@test", 1}, // loaded: the cursor entry is spelt out
		{"tasks", func() { h.key("t") }, "tasks  (1 running", 1},
		{"list", func() { h.key(":"); h.typeText("probes"); h.key("enter") }, "probes (last verdict", 1},
		{"help", func() { h.key("?") }, "rangekeeper keys", 1},
		{"author", func() { h.key("a") }, "rangekeeper author", 1},
		{"probe report", nil, "Escape probe", 1},
	} {
		func() {
			if s.open == nil { // the report opens after a probe of the same sandbox
				h.key("p")
				h.waitText(s.ready)
			}
			done := make(chan error, 1)
			go func() {
				_, err := h.layer.Snapshot(context.Background(), action.Request{SandboxID: webID}, backends.SnapshotOptions{})
				done <- err
			}()
			<-started
			if s.open != nil {
				s.open()
			}
			h.waitText(s.ready)
			h.key("X")
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("X on %s: snapshot ended with %v, want cancelled", s.name, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("X on %s did not cancel; frame:\n%s", s.name, h.frame())
			}
			for range s.closeN {
				h.key("esc")
			}
			h.waitFor("the fleet after "+s.name, func(f string) bool {
				return strings.Contains(f, "/4 sandboxes") && (s.closeN == 0 || !strings.Contains(f, s.ready))
			})
		}()
	}
	if got := outcomes(t, h.db, "snapshot", webID); len(got) != 9 {
		t.Errorf("%d snapshot outcomes, want 9 (all cancelled)", len(got))
	} else {
		for _, e := range got {
			if e.Outcome != state.OutcomeCancelled {
				t.Errorf("outcome %+v, want cancelled", e)
			}
		}
	}
}
