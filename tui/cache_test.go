package tui

import (
	"errors"
	"testing"
	"time"
)

func TestInventoryCacheIsSavedPeriodicallyInACommand(t *testing.T) {
	saves := 0
	m := New(Options{NoColor: true, CacheEvery: 30 * time.Second, SaveCache: func() error { saves++; return nil }})
	start := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	if cmd := m.maybeSaveCache(start); cmd != nil {
		t.Fatal("saved on the first tick, before the fleet arrived")
	}
	if cmd := m.maybeSaveCache(start.Add(10 * time.Second)); cmd != nil {
		t.Fatal("saved before the period elapsed")
	}
	cmd := m.maybeSaveCache(start.Add(31 * time.Second))
	if cmd == nil {
		t.Fatal("no save after the period")
	}
	if saves != 0 {
		t.Fatal("the save ran inside Update instead of in the command")
	}
	if msg := cmd(); msg != nil || saves != 1 {
		t.Fatalf("save command: msg %v, saves %d", msg, saves)
	}
	m.opts.SaveCache = func() error { return errors.New("disk full") }
	if msg, ok := m.maybeSaveCache(start.Add(62 * time.Second))().(cacheErrMsg); !ok || msg.err.Error() != "disk full" {
		t.Fatalf("a failed save must come back as a message, got %v", msg)
	}
}
