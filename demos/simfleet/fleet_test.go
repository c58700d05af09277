package simfleet

import (
	"context"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

func TestSimulatedFleetListsThenChurnsAndRefusesActions(t *testing.T) {
	b := New("demo", backends.KindKubernetes, 300, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	var resets, upserts int
	var first []backends.Sandbox
	done := make(chan error, 1)
	go func() {
		done <- b.Watch(ctx, func(ev backends.Event) {
			switch ev.Type {
			case backends.EventReset:
				resets++
				first = ev.Sandboxes
			case backends.EventUpsert:
				upserts++
				if upserts == 20 {
					cancel()
				}
			}
		})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if resets != 1 || len(first) != 300 || upserts < 20 {
		t.Fatalf("resets=%d rows=%d upserts=%d", resets, len(first), upserts)
	}
	seen := map[string]bool{}
	for _, s := range first {
		if !s.Simulated || seen[s.ID] {
			t.Fatalf("row %s: simulated=%v duplicate=%v", s.ID, s.Simulated, seen[s.ID])
		}
		seen[s.ID] = true
	}
	if ok, why := backends.Supports(b, backends.ActionTeardown); ok || why == "" {
		t.Fatalf("simulated teardown supported=%v why=%q", ok, why)
	}
}
