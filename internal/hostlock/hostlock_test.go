package hostlock

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestAcquireRefusesSecondHolderAndRemembersUnfinished(t *testing.T) {
	dir := t.TempDir()
	a, prev, err := Acquire(dir, Holder{Sandbox: "docker:default/x", Action: "revert", PID: 1, Since: time.Now()})
	if err != nil || prev != nil {
		t.Fatalf("first acquire: %v %v", prev, err)
	}
	_, _, err = Acquire(dir, Holder{Sandbox: "docker:default/x", Action: "teardown", PID: 2})
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.Action != "revert" || !errors.Is(err, ErrHeld) {
		t.Fatalf("second acquire: %v", err)
	}
	if err := a.SetRecord("/s/state.db", 7); err != nil {
		t.Fatal(err)
	}
	a.Release() // as a killed holder would: the record stays named
	b, prev, err := Acquire(dir, Holder{Sandbox: "docker:default/x", Action: "snapshot", PID: 3})
	if err != nil || prev == nil || prev.Record != 7 || prev.State != "/s/state.db" {
		t.Fatalf("after an unfinished holder: prev %+v err %v", prev, err)
	}
	if err := b.SetRecord("", 0); err != nil { // recovered
		t.Fatal(err)
	}
	b.Release()
	c, prev, err := Acquire(dir, Holder{Sandbox: "docker:default/x", Action: "snapshot", PID: 4})
	if err != nil || prev != nil {
		t.Fatalf("after recovery: prev %+v err %v", prev, err)
	}
	c.Release()
	// Other sandboxes are independent.
	d, _, err := Acquire(dir, Holder{Sandbox: "docker:default/y", Action: "snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	d.Release()
}

// A holder takes the lock before it writes who it is; a process refused in between waits for
// the record rather than naming nobody (the race CI once caught).
func TestRefusedProcessWaitsForTheHolderToRecordItself(t *testing.T) {
	dir := t.TempDir()
	const sb = "docker:default/x"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(lockPath(dir, sb), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	late := &Lock{f: f, holder: Holder{Sandbox: sb, Action: "teardown", PID: 7}}
	wrote := make(chan error, 1)
	go func() { time.Sleep(20 * time.Millisecond); wrote <- late.write() }()
	_, _, err = Acquire(dir, Holder{Sandbox: sb, Action: "snapshot"})
	if werr := <-wrote; werr != nil {
		t.Fatal(werr)
	}
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.Action != "teardown" || held.Holder.PID != 7 {
		t.Fatalf("refusal = %v", err)
	}
}

func TestHolderNotYetRecordedSaysSo(t *testing.T) {
	if s := (Holder{}).String(); !strings.Contains(s, "not yet recorded") {
		t.Fatalf("empty holder = %q", s)
	}
}
