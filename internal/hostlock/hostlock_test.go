package hostlock

import (
	"errors"
	"testing"
	"time"
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
