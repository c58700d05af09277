package state

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Written wakes a reader at another handle's write (another process's, as far as the file is
// concerned), not at reads, and not for a write it was taken after.
func TestWrittenWakesAtAnotherHandlesWrite(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the notification path is exercised on Linux (inotify); elsewhere callers may poll")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	db, other := openTwo(t, path)
	if err := other.RecordSession(Session{Start: time.Now(), Last: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ch := db.Written()
	if ch == nil {
		t.Fatal("Written is nil on Linux: no notifications")
	}
	if _, err := other.Alerts(AlertQuery{}); err != nil { // a read writes nothing
		t.Fatal(err)
	}
	if _, err := db.Quarantines(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("woken by reads, or by the write made before Written was called")
	case <-time.After(200 * time.Millisecond):
	}
	if err := other.RecordSession(Session{Start: time.Now(), Last: time.Now()}); err != nil {
		t.Fatal(err)
	}
	mustWake(t, ch, "another handle's write did not wake the reader")
	next := db.Written()
	if next == nil || next == ch {
		t.Fatalf("after a write Written returns %v, want a fresh channel", next)
	}
}

// A state file that is removed (or replaced) ends the notifications: waiters wake and Written
// returns nil, so callers fall back to polling rather than waiting on a file nobody writes.
func TestWrittenEndsWhenTheFileIsRemoved(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify only")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	db, _ := openTwo(t, path)
	ch := db.Written()
	if ch == nil {
		t.Fatal("no notifications")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	mustWake(t, ch, "removing the file did not wake the waiter")
	if db.Written() != nil {
		t.Error("Written still offers notifications for a removed file")
	}
}

// After Close, Written stops offering notifications (the watcher is released).
func TestWrittenStopsAtClose(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify only")
	}
	db, _ := openTwo(t, filepath.Join(t.TempDir(), "state.db"))
	ch := db.Written()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	mustWake(t, ch, "Close did not wake the waiter")
	if db.Written() != nil {
		t.Error("Written offers notifications after Close")
	}
}

func openTwo(t *testing.T, path string) (*DB, *DB) {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); other.Close() })
	return db, other
}

// mustWake fails with why unless ch closes within 5 s.
func mustWake(t *testing.T, ch <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal(why)
	}
}
