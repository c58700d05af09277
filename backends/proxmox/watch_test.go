package proxmox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/proxmox/pvesim"
)

// next waits for an event matching ok, failing after a deadline.
func next(t *testing.T, ch <-chan backends.Event, what string, ok func(backends.Event) bool) backends.Event {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e := <-ch:
			if ok(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestWatchEmitsResetThenDiffs(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	b.interval, b.maxInterval = 20*time.Millisecond, 80*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan backends.Event, 256)
	done := make(chan error, 1)
	go func() { done <- b.Watch(ctx, func(e backends.Event) { ch <- e }) }()

	first := <-ch
	if first.Type != backends.EventReset || len(first.Sandboxes) != 4 || !first.Sandboxes[0].Simulated {
		t.Fatalf("first event = type %v with %d sandboxes", first.Type, len(first.Sandboxes))
	}

	// A new sample appears: zone + VM tagged inspect.
	sim.AddZone("new004z", map[string][]pvesim.Subnet{"new004v0": {{CIDR: "10.4.0.0/24"}}})
	if _, err := sim.AddVM(pvesim.VMSpec{VMID: 400, Name: "default", Tags: "inspect", Running: true,
		Config: map[string]any{"net0": "virtio,bridge=new004v0,firewall=1"}}); err != nil {
		t.Fatal(err)
	}
	up := next(t, ch, "upsert of new004z", func(e backends.Event) bool {
		return e.Type == backends.EventUpsert && e.Sandbox.ID == "pve:lab/new004z"
	})
	if up.Sandbox.Status != backends.StatusRunning || up.Sandbox.Members[0].ID != "400" {
		t.Errorf("upsert %+v", up.Sandbox)
	}

	// A member stops: the sandbox is upserted as partial.
	sim.SetRunning(112, false)
	next(t, ch, "partial cyb002z", func(e backends.Event) bool {
		return e.Type == backends.EventUpsert && e.Sandbox.ID == "pve:lab/cyb002z" && e.Sandbox.Status == backends.StatusPartial
	})

	// The sample disappears.
	sim.RemoveVM(400)
	next(t, ch, "removal of new004z", func(e backends.Event) bool {
		return e.Type == backends.EventRemove && e.ID == "pve:lab/new004z"
	})

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch after cancel = %v, want nil", err)
	}
}

func TestWatchReturnsErrorWhenUnreachable(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{})
	b.interval, b.maxInterval = 10*time.Millisecond, 20*time.Millisecond
	done := make(chan error, 1)
	reset := make(chan struct{}, 1)
	go func() {
		done <- b.Watch(context.Background(), func(e backends.Event) {
			if e.Type == backends.EventReset {
				reset <- struct{}{}
			}
		})
	}()
	<-reset
	sim.Close()
	select {
	case err := <-done:
		if err == nil || !strings.HasPrefix(err.Error(), "pve:lab:") {
			t.Fatalf("Watch = %v, want an error naming the backend", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after the API went away")
	}
}

// A refresh that finds nothing new (same resources, configs and SDN, even refetched) returns
// the previous fleet itself: no regrouping, no posture, nothing for Watch to compare. A config
// changed behind rangekeeper's back is still found once its cache entry is refetched.
func TestIdleRefreshReusesTheFleetAndStillSeesConfigChanges(t *testing.T) {
	sim, b := startDemo(t, pvesim.Options{}) // cacheTTL 0: every refresh refetches every config
	ctx := ctxT(t)
	f1, err := b.discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := b.discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f2 != f1 {
		t.Fatal("an unchanged range was grouped again")
	}
	before := findSandbox(t, f1.sandboxes, "pve:lab/cyb002z")
	sim.SetConfig(112, "cpu", "host")
	f3, err := b.discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f3 == f1 {
		t.Fatal("a changed config was not noticed")
	}
	after := findSandbox(t, f3.sandboxes, "pve:lab/cyb002z")
	if len(after.Findings) == len(before.Findings) {
		t.Errorf("cpu=host added no finding: %d before, %d after", len(before.Findings), len(after.Findings))
	}
}
