package proxmox

import (
	"context"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// PVE tasks on a sandbox's VMs reach the timeline as Activity: a snapshot runs one task per
// VM, each reported once, with its type, status and the user who ran it.
func TestWatchReportsVMTasks(t *testing.T) {
	_, b := startDemo(t, pvesim.Options{})
	b.interval, b.maxInterval = 20*time.Millisecond, 80*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan backends.Event, 1024)
	done := make(chan error, 1)
	go func() { done <- b.Watch(ctx, func(e backends.Event) { ch <- e }) }()
	<-ch // the reset
	if _, err := b.Snapshot(ctxT(t), "pve:lab/cyb001z", backends.SnapshotOptions{Name: "tl"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	deadline := time.After(10 * time.Second)
	for len(got) < 2 {
		select {
		case e := <-ch:
			if e.Type != backends.EventActivity || e.Activity.Kind != sandbox.ActTask {
				continue
			}
			a := e.Activity
			if a.SandboxID != "pve:lab/cyb001z" || a.Attrs["type"] != "qmsnapshot" || a.Attrs["status"] != "OK" || a.Actor == "" {
				t.Errorf("task activity %+v", a)
			}
			got[a.Member]++
		case <-deadline:
			t.Fatalf("task activity for 2 VMs, got %v", got)
		}
	}
	time.Sleep(200 * time.Millisecond) // more refreshes: no task reported twice
	for len(ch) > 0 {
		if e := <-ch; e.Type == backends.EventActivity && e.Activity.Kind == sandbox.ActTask {
			got[e.Activity.Member]++
		}
	}
	for m, n := range got {
		if n != 1 {
			t.Errorf("%s: task reported %d times", m, n)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
