package proxmox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

// With 20% injected errors, dropped answers and slow responses, every action ends in success
// or a clear error (never a panic or a hang), and nothing leaks once the simulator is closed.
func TestActionsUnderInjectedFaults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sim, err := pvesim.StartDemo(pvesim.Options{TaskDelay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSimulated("lab", sim)
	if err != nil {
		t.Fatal(err)
	}
	b.SetTaskTimeout(3 * time.Second)
	sim.SetFaults(pvesim.Faults{ErrorRate: 0.2, DropRate: 0.03, Latency: time.Millisecond, Jitter: 4 * time.Millisecond, Seed: 42})

	const id = "pve:lab/cyb002z"
	type outcome struct{ ok, failed int }
	results := map[string]*outcome{}
	last := time.Now()
	record := func(action string, err error) {
		if d := time.Since(last); d > time.Second {
			t.Logf("slow: %s took %s", action, d)
		}
		last = time.Now()
		o := results[action]
		if o == nil {
			o = &outcome{}
			results[action] = o
		}
		if err == nil {
			o.ok++
			return
		}
		o.failed++
		msg := err.Error()
		t.Logf("%s failed: %v", action, err)
		// A clear error says what failed; it is never a bare transport string or empty.
		if msg == "" || errors.Is(err, context.DeadlineExceeded) && !strings.Contains(msg, " ") {
			t.Errorf("%s: unclear error %q", action, msg)
		}
		if !strings.Contains(msg, "VM ") && !strings.Contains(msg, "pve:lab") && !strings.Contains(msg, "snapshot") && !strings.Contains(msg, "exec") {
			t.Errorf("%s: error does not name what failed: %q", action, msg)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("s%02d", i)
		_, err := b.Snapshot(ctx, id, backends.SnapshotOptions{Name: name})
		record("snapshot", err)
		_, err = b.Snapshots(ctx, id)
		record("list", err)
		_, err = b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"echo", name}})
		record("exec", err)
		record("copy-to", b.CopyTo(ctx, id, "default", "/tmp/"+name, []byte(name), 0o644))
		_, err = b.CopyFrom(ctx, id, "default", "/etc/hostname")
		record("copy-from", err)
		record("revert", b.Revert(ctx, id, name, backends.RevertOptions{Start: i%2 == 0}))
		record("delete-snapshot", b.DeleteSnapshot(ctx, id, name))
	}
	record("teardown", b.Teardown(ctx, "pve:lab/web003z", backends.TeardownOptions{}))
	// Watch survives or reports: with 20% errors it must still deliver its first Reset.
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	gotReset := false
	werr := b.Watch(wctx, func(e backends.Event) { gotReset = gotReset || e.Type == backends.EventReset })
	wcancel()
	if werr != nil && !strings.HasPrefix(werr.Error(), "pve:lab:") {
		t.Errorf("watch error does not name the backend: %v", werr)
	}
	total := 0
	for action, o := range results {
		t.Logf("%-16s ok=%d failed=%d", action, o.ok, o.failed)
		total += o.ok
	}
	if total == 0 {
		t.Fatal("no action succeeded under 20% faults: retries of idempotent reads are not working")
	}
	if results["list"].ok == 0 || results["copy-from"].ok == 0 {
		t.Error("idempotent reads never succeeded despite retries")
	}
	sim.Close()
}
