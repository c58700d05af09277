package tui

import (
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/list"
)

func TestSnapshotsListMarksSnapshotsOfGoneSandboxes(t *testing.T) {
	h := newHarness(t, harnessOpts{w: 160, h: 40, setupDB: func(db *state.DB) {
		for _, r := range []state.SnapshotRecord{
			{Info: backends.SnapshotInfo{ID: "snap-live", SandboxID: "docker:test/inspect-ctf-web-iabc123", Name: "kept", Created: t0}, Backend: "docker:test"},
			{Info: backends.SnapshotInfo{ID: "snap-gone", SandboxID: "docker:test/inspect-removed-i999", Name: "left-behind", Created: t0}, Backend: "docker:test"},
		} {
			if err := db.PutSnapshot(r); err != nil {
				t.Fatal(err)
			}
		}
	}})
	h.key(":")
	h.typeText("snapshots")
	h.key("enter")
	f := h.waitText("left-behind")
	for _, l := range strings.Split(f, "\n") {
		if strings.Contains(l, "left-behind") != strings.Contains(l, list.OrphanMark) {
			t.Fatalf("only the removed sandbox's snapshot is orphaned; line %q\n%s", l, f)
		}
	}
	if !strings.Contains(f, "1 orphaned (sandbox gone)") || !strings.Contains(f, "snapshots prune") {
		t.Fatalf("no orphan count with the prune command:\n%s", f)
	}
}

func TestDetailMarksSnapshotsOrphanedWhenTheSandboxGoes(t *testing.T) {
	h := newHarness(t, harnessOpts{w: 160, h: 50})
	h.key("j", "s", "enter")
	h.waitText("done: snapshot auto-1")
	h.key("enter")
	f := h.waitText("SNAPSHOTS (1)")
	if strings.Contains(f, "ORPHANED") {
		t.Fatalf("a live sandbox's snapshots marked orphaned:\n%s", f)
	}
	// Removed behind rangekeeper's back (compose down): the backend reports it gone.
	h.docker.mu.Lock()
	emit := h.docker.emit
	h.docker.mu.Unlock()
	emit(backends.Event{Type: backends.EventRemove, ID: "docker:test/inspect-ctf-web-iabc123"})
	f = h.waitText("ORPHANED: the sandbox is gone")
	if !strings.Contains(f, "auto-1") || !strings.Contains(f, "orphaned") {
		t.Fatalf("the snapshot line is not marked:\n%s", f)
	}
}
