package action

import (
	"context"
	"errors"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// TestStopRefusesNewActionsAndInterruptJournalsInterrupted: after Stop a running verify goes on
// while a new action is refused (journaled); Interrupt then cuts the running one short and its
// outcome, and its task, say interrupted rather than cancelled.
func TestStopRefusesNewActionsAndInterruptJournalsInterrupted(t *testing.T) {
	l, _, db := setup(t, false)
	var stopErr error
	err := l.Verify(context.Background(), Request{SandboxID: specKey, Identity: bob}, func(ctx context.Context) (map[string]string, error) {
		l.Stop()
		if err := l.Check(Request{Action: backends.ActionSnapshot, SandboxID: sbID}); !errors.Is(err, ErrStopping) {
			t.Errorf("Check while stopping = %v; want ErrStopping", err)
		}
		_, stopErr = l.Snapshot(ctx, Request{SandboxID: sbID, Identity: bob}, backends.SnapshotOptions{})
		if ctx.Err() != nil {
			t.Error("Stop cancelled the running action")
		}
		if n := l.Interrupt(); n != 1 {
			t.Errorf("Interrupt cancelled %d actions; want 1", n)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if !errors.Is(stopErr, ErrStopping) {
		t.Errorf("snapshot while stopping = %v; want ErrStopping", stopErr)
	}
	if !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted verify = %v; want ErrStopped wrapping the cancellation", err)
	}
	var outcomes []string
	for _, e := range journal(t, db) {
		if e.Phase == state.PhaseOutcome {
			outcomes = append(outcomes, e.Action+" "+e.Outcome)
		}
	}
	if len(outcomes) != 2 || outcomes[0] != "snapshot refused" || outcomes[1] != "verify interrupted" {
		t.Errorf("outcomes %q; want the snapshot refused, the verify interrupted", outcomes)
	}
	if ts := l.Tasks(); len(ts) != 1 || ts[0].Status != TaskStatus(state.OutcomeInterrupted) {
		t.Errorf("tasks %+v; want the verify interrupted", ts)
	}
}
