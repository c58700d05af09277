package supervisor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// activityBackend emits n activities after its reset, then waits.
type activityBackend struct{ n int }

func (a activityBackend) Name() string        { return "docker:act" }
func (a activityBackend) Kind() backends.Kind { return backends.KindDocker }
func (a activityBackend) Watch(ctx context.Context, emit func(backends.Event)) error {
	emit(backends.Event{Type: backends.EventReset})
	for i := range a.n {
		emit(backends.Event{Type: backends.EventActivity, Activity: &backends.Activity{SandboxID: "docker:act/p", Kind: "k", Detail: fmt.Sprint(i)}})
	}
	<-ctx.Done()
	return nil
}

// Activity goes to a bounded log that readers follow with a cursor: not into the fleet, never
// folded like fleet events, and a reader that fell behind is told how much it lost.
func TestActivityLogIsReadWithACursorAndBounded(t *testing.T) {
	defer func(n int) { MaxActivity = n }(MaxActivity)
	MaxActivity = 100
	s := New([]backends.Backend{activityBackend{n: 250}}, Backoff{})
	notify := s.ActivityNotify()
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	defer func() { cancel(); wait() }()
	select {
	case <-notify:
	case <-time.After(5 * time.Second):
		t.Fatal("no activity notification")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, next, _ := s.Activity(0); next == 250 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the 250 activities never arrived")
		}
		time.Sleep(time.Millisecond)
	}
	got, next, lost := s.Activity(10)
	if len(got) != 100 || next != 250 || lost != 140 || got[0].Detail != "150" || got[99].Detail != "249" {
		t.Fatalf("from cursor 10: %d entries (first %q), next %d, lost %d; want the last 100, next 250, 140 lost", len(got), got[0].Detail, next, lost)
	}
	if got, next, lost := s.Activity(next); len(got) != 0 || next != 250 || lost != 0 {
		t.Fatalf("at the end: %d entries, next %d, lost %d", len(got), next, lost)
	}
	if len(s.Fleet()) != 0 {
		t.Fatalf("activity reached the fleet: %v", s.Fleet())
	}
}
