package proxmox

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

// A VM sandbox's logs are its PVE tasks with their task-log lines (from the API, here the
// simulator) and, per VM, the guest journal through the agent or the reason it is not there.
func TestLogsTasksAndGuestJournal(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	ctx := ctxT(t)
	const id = "pve:lab/cyb001z"
	if _, err := b.Snapshot(ctx, id, backends.SnapshotOptions{Name: "for-logs"}); err != nil {
		t.Fatal(err)
	}
	s, err := b.Logs(ctx, id, backends.LogOptions{Tail: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tasks, journal []backends.LogLine
	for {
		l, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch l.Stream {
		case backends.LogTask:
			tasks = append(tasks, l)
		case backends.LogSystem:
			journal = append(journal, l)
		}
	}
	snapLines := 0
	for _, l := range tasks {
		if strings.Contains(l.Text, "task qmsnapshot") {
			snapLines++
		}
	}
	if snapLines != 2 {
		t.Errorf("want one qmsnapshot task per VM (2), got %d in %+v", snapLines, tasks)
	}
	members := map[string]bool{}
	for _, l := range journal {
		members[l.Member] = true
		// The simulator's guests have no journalctl: the reason names it.
		if l.Text != "guest journal unavailable: journalctl exited 127: sh: journalctl: not found" {
			t.Errorf("journal line: %q", l.Text)
		}
	}
	if len(members) != 2 {
		t.Errorf("want a journal line (content or reason) for each of 2 VMs: %+v", journal)
	}
	if _, err := b.Logs(ctx, id, backends.LogOptions{Member: "nope"}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("unknown member: %v", err)
	}
}
