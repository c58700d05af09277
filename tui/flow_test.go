package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/state"
)

const webID = "docker:test/inspect-ctf-web-iabc123"

// outcomes returns the journal's outcome entries for an action on a target.
func outcomes(t *testing.T, db *state.DB, act, target string) []state.Entry {
	t.Helper()
	es, err := db.Journal(state.JournalQuery{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	var out []state.Entry
	for _, e := range es {
		if e.Action == act && e.Phase == state.PhaseOutcome {
			out = append(out, e)
		}
	}
	return out
}

func TestSnapshotProgressDoneJournal(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan string, 1)
	h := newHarness(t, harnessOpts{setup: func(d *fakeBackend) { d.gate, d.started = gate, started }})
	h.key("j", "s")
	h.waitText("name (optional")
	h.typeText("before-fix")
	h.key("enter")
	<-started
	// Progress in place while the backend works, and the task panel lists it as running.
	h.waitText("snapshot inspect-ctf-web-iabc123: running")
	h.key("t")
	h.waitText("tasks  (1 running")
	h.key("esc")
	close(gate)
	h.waitText("snapshot inspect-ctf-web-iabc123 done: snapshot before-fix (snap-1)")
	h.key("@")
	f := h.waitText("snapshot  ok")
	if !strings.Contains(f, "snapshot  intent") {
		t.Errorf("journal lacks the intent entry:\n%s", f)
	}
	if got := outcomes(t, h.db, "snapshot", webID); len(got) != 1 || got[0].Outcome != state.OutcomeOK {
		t.Errorf("journal outcomes = %+v, want one ok", got)
	}
}

func TestTeardownDialogRefusesWrongName(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.key("j", "D")
	h.waitText("type inspect-ctf-web-iabc123 to confirm")
	// Cancel has focus: enter right away cancels.
	h.key("enter")
	h.waitText("teardown: cancelled")
	h.key("D")
	h.typeText("inspect-ctf-web")
	h.key("tab", "enter")
	h.waitText(`refused: typed "inspect-ctf-web"`)
	time.Sleep(50 * time.Millisecond)
	h.docker.mu.Lock()
	n := len(h.docker.tornDown)
	h.docker.mu.Unlock()
	if n != 0 {
		t.Fatalf("a wrong name tore %d sandboxes down", n)
	}
	h.typeText("-iabc123")
	h.key("tab", "enter")
	h.waitText("teardown inspect-ctf-web-iabc123 done")
	h.waitText("3/3 sandboxes") // the backend's remove event reached the table
	if got := outcomes(t, h.db, "teardown", webID); len(got) != 1 || got[0].Outcome != state.OutcomeOK {
		t.Errorf("journal outcomes = %+v, want one ok", got)
	}
}

func TestBulkTeardownTypesCount(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.key("space", "space") // marks the first two rows
	h.waitText("marked:2")
	h.key("D")
	h.waitText("type 2 to confirm")
	h.typeText("2")
	h.key("tab", "enter")
	h.waitText("teardown done on 2 sandboxes")
	h.docker.mu.Lock()
	defer h.docker.mu.Unlock()
	if len(h.docker.tornDown) != 2 {
		t.Errorf("torn down %v, want 2", h.docker.tornDown)
	}
}

func TestBulkProbe(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.key("space", "space", "p")
	h.waitText("probe done on 2 sandboxes")
	for _, id := range []string{"docker:test/inspect-ctf-pwn-idef456", webID} {
		ps, err := h.db.Probes(id, 0)
		if err != nil || len(ps) != 1 {
			t.Errorf("probes of %s = %v, %v; want one", id, ps, err)
		}
	}
	h.key("g", "j", "enter")
	h.waitText("last 2026-12-03 09:00:00")
}

func TestFailingActionShowsErrorInPlaceAndInJournal(t *testing.T) {
	h := newHarness(t, harnessOpts{setup: func(d *fakeBackend) { d.failWith = errBoom }})
	h.key("j", "s", "enter")
	h.waitText("snapshot failed: inspect-ctf-web-iabc123: engine said no: disk full")
	got := outcomes(t, h.db, "snapshot", webID)
	if len(got) != 1 || got[0].Outcome != state.OutcomeFailed || !strings.Contains(got[0].Error, "disk full") {
		t.Fatalf("journal outcomes = %+v, want one failed with the error", got)
	}
	h.key("@")
	h.waitText("error: engine said no: disk full")
}

func TestCancelRunningAction(t *testing.T) {
	gate := make(chan struct{}) // never opened: only cancellation ends the snapshot
	started := make(chan string, 1)
	h := newHarness(t, harnessOpts{setup: func(d *fakeBackend) { d.gate, d.started = gate, started }})
	h.key("j", "s", "enter")
	<-started
	h.waitText("running")
	h.waitFor("progress in place on the row", func(s string) bool {
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, "inspect-ctf-web-iabc123") && strings.Contains(line, "  snapshot ") {
				return true
			}
		}
		return false
	})
	h.key("x")
	h.waitText("snapshot cancelled")
	if got := outcomes(t, h.db, "snapshot", webID); len(got) != 1 || got[0].Outcome != state.OutcomeCancelled {
		t.Errorf("journal outcomes = %+v, want one cancelled", got)
	}
}

func TestRevertPicksNewestFirstAndConfirmOpensOnCancel(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	for _, name := range []string{"old", "new"} {
		h.key("j", "s")
		h.typeText(name)
		h.key("enter")
		h.waitText("done: snapshot " + name)
		h.key("k")
	}
	h.key("j", "r")
	f := h.waitText("to which snapshot")
	if strings.Index(f, "new") > strings.Index(f, "  old  ") {
		t.Errorf("picker is not newest first:\n%s", f)
	}
	h.key("down", "enter") // pick "old"
	h.waitText("to snapshot 2026-12-03 09:01:00  old")
	h.key("enter") // Cancel is focused
	h.waitText("revert: cancelled")
	h.key("r")
	h.waitText("to which snapshot")
	h.key("down", "enter", "tab", "enter")
	h.waitText("revert inspect-ctf-web-iabc123 done: reverted to snap-1")
	h.docker.mu.Lock()
	defer h.docker.mu.Unlock()
	if len(h.docker.reverted) != 1 || h.docker.reverted[0] != webID+"@snap-1" {
		t.Errorf("reverted = %v", h.docker.reverted)
	}
}

func TestDisabledActionShowsReason(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.key("G", "s")
	h.waitText("snapshot: not supported by Kubernetes — reset available")
	h.key("r")
	h.waitText("revert: not supported by Kubernetes — reset available")
}

func TestRemappedKeysWorkAndShowInHelp(t *testing.T) {
	km, err := Keys(map[string]string{"snapshot": "S", "journal": "J"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{keys: km})
	h.waitText("S snapshot") // footer
	h.key("?")
	f := h.waitText("rangekeeper keys")
	if !strings.Contains(f, "S             snapshot") || !strings.Contains(f, "J             journal") {
		t.Errorf("help does not show the remapped keys:\n%s", f)
	}
	h.key("esc", "j", "s") // the old key no longer snapshots
	time.Sleep(50 * time.Millisecond)
	if strings.Contains(h.frame(), "name (optional") {
		t.Fatal("s still opens the snapshot prompt after remapping")
	}
	h.key("S")
	h.waitText("name (optional")
	h.key("esc", "J")
	h.waitText("journal  (")
}

func TestReadOnlyHasNoDangerousBindings(t *testing.T) {
	h := newHarness(t, harnessOpts{readOnly: true})
	f := h.waitText("READ-ONLY")
	for _, hint := range []string{"D teardown", "s snapshot", "r revert"} {
		if strings.Contains(f, hint) {
			t.Errorf("read-only footer shows %q", hint)
		}
	}
	h.key("j", "D", "s", "r")
	time.Sleep(50 * time.Millisecond)
	if f := h.frame(); strings.Contains(f, "tear down") || strings.Contains(f, "name (optional") {
		t.Fatalf("a dangerous key acted in read-only mode:\n%s", f)
	}
	h.key("?")
	f = h.waitText("read-only: dangerous actions are not bound")
	if strings.Contains(f, "teardown") {
		t.Errorf("help lists teardown in read-only mode")
	}
}

func TestCommandModeNounsHistorySortGroup(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.key(":")
	h.typeText("k8s")
	h.key("enter")
	h.waitText("1/4 sandboxes")
	h.key(":")
	h.typeText("sandboxes")
	h.key("enter")
	h.waitText("4/4 sandboxes")
	h.key(":", "up", "up")
	h.waitText(":k8s_")
	h.key("esc", ":")
	h.typeText("sort age")
	h.key("enter")
	h.waitText("sort:age asc")
	h.key(":")
	h.typeText("group task")
	h.key("enter")
	h.waitText("group:task")
	h.key(":")
	h.typeText("bogus")
	h.key("enter")
	h.waitText(`unknown command "bogus"`)
	h.key(":")
	h.typeText("journal")
	h.key("enter")
	h.waitText("journal  (")
	h.key("esc", ":")
	h.typeText("snapshots")
	h.key("enter")
	h.waitText("no snapshots recorded")
}

func TestDeadBackendReconnectingUIResponsive(t *testing.T) {
	dead, err := docker.New(docker.Endpoint{Name: "dead", Host: "unix:///nonexistent.sock"}, docker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	h := newHarness(t, harnessOpts{w: 120, h: 40, extra: []backends.Backend{dead}})
	f := h.waitText("docker:dead reconnecting")
	if !strings.Contains(f, "nonexistent.sock") {
		t.Errorf("the reason (the socket) is not shown:\n%s", f)
	}
	// The other backends stay live and the UI keeps answering keys.
	h.key("j", "enter")
	h.waitText("MEMBERS (2)")
	h.key("esc", "?")
	h.waitText("rangekeeper keys")
	h.key("esc", ":")
	h.typeText("docker")
	h.key("enter")
	h.waitText("3/4 sandboxes")
}

func TestHelpListsDisabledBindingsWithReason(t *testing.T) {
	h := newHarness(t, harnessOpts{w: 120, h: 44}) // tall enough for help in one column
	h.key("G", "?")
	f := h.waitText("rangekeeper keys")
	if !strings.Contains(f, "  s             snapshot: not supported by Kubernetes — reset available") {
		t.Errorf("help does not give the disabled reason:\n%s", f)
	}
}

func TestSingleProbeOpensItsReport(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.key("j", "p")
	h.waitText("Escape probe")
	h.key("esc")
	h.waitFor("back to the fleet", func(s string) bool {
		return strings.Contains(s, "/4 sandboxes") && !strings.Contains(s, "Escape probe")
	})
}
