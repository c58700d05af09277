package action

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// startBlocked starts a teardown by who that runs until cancelled, and waits until it holds the
// sandbox's lock.
func startBlocked(t *testing.T, l *Layer, fb *fakeBackend, who Identity) <-chan error {
	t.Helper()
	fb.block = make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- l.Teardown(context.Background(), Request{SandboxID: sbID, Confirmed: true, Identity: who}, backends.TeardownOptions{})
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, busy := l.Busy(sbID); busy {
			return done
		}
		if time.Now().After(deadline) {
			t.Fatal("teardown never started")
		}
	}
}

// TestCancelAsksTheAuthorizerAndIsJournaled: Cancel is refused to an identity the authorizer
// refuses (journaled with that identity; the action runs on), and a cancellation that goes
// through is journaled with who cancelled whose action; with nothing running it reports false.
func TestCancelAsksTheAuthorizerAndIsJournaled(t *testing.T) {
	l, fb, db := setup(t, false)
	l.opts.AuthorizeCancel = func(who Identity, running backends.Action) error {
		if who.Operator == "vic" {
			return fmt.Errorf("vic is viewer, cancelling %s needs operator: %w", running, ErrForbidden)
		}
		return nil
	}
	vic := Identity{Operator: "vic", Transport: TransportSSH, Fingerprint: "SHA256:vic"}
	if ok, err := l.Cancel(bob, sbID); ok || err != nil {
		t.Fatalf("cancel with nothing running = %v, %v", ok, err)
	}
	done := startBlocked(t, l, fb, local)
	ok, err := l.Cancel(vic, sbID)
	if ok || !errors.Is(err, ErrForbidden) {
		t.Fatalf("refused cancel = %v, %v", ok, err)
	}
	if _, busy := l.Busy(sbID); !busy {
		t.Fatal("a refused cancel stopped the teardown")
	}
	if ok, err := l.Cancel(bob, sbID); !ok || err != nil {
		t.Fatalf("cancel = %v, %v", ok, err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled teardown = %v", err)
	}
	var cancels []state.Entry
	for _, e := range journal(t, db) {
		if e.Action == ActionCancel {
			cancels = append(cancels, e)
		}
	}
	if len(cancels) != 2 {
		t.Fatalf("cancel entries = %+v; want the refusal and the cancellation", cancels)
	}
	if r := cancels[0]; r.Operator != "vic" || r.Outcome != state.OutcomeRefused || r.Params["action"] != "teardown" || r.Error == "" {
		t.Errorf("refusal journaled as %+v", r)
	}
	if c := cancels[1]; c.Operator != "bob" || c.Fingerprint != bob.Fingerprint || c.Outcome != state.OutcomeOK || c.Params["started_by"] != local.Operator {
		t.Errorf("cancellation journaled as %+v", c)
	}
}

// TestBusyRefusalNamesTheHolder: an action refused because another holds the lock is journaled
// refused with who asked and which action of whom holds it.
func TestBusyRefusalNamesTheHolder(t *testing.T) {
	l, fb, db := setup(t, false)
	done := startBlocked(t, l, fb, local)
	_, err := l.Snapshot(context.Background(), Request{SandboxID: sbID, Identity: bob}, backends.SnapshotOptions{})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("snapshot while busy = %v", err)
	}
	l.Cancel(Identity{}, sbID)
	<-done
	var refused state.Entry
	for _, e := range journal(t, db) {
		if e.Action == string(backends.ActionSnapshot) && e.Phase == state.PhaseOutcome {
			refused = e
		}
	}
	if refused.Outcome != state.OutcomeRefused || refused.Operator != "bob" || refused.Params["held_by"] != local.Operator ||
		refused.Params["held_action"] != "teardown" {
		t.Errorf("busy refusal journaled as %+v", refused)
	}
}

// TestPlainKindsTakeNoOptions: Act takes exactly the kinds that need nothing but the sandbox,
// through their helpers (journaled like any action), and refuses the others.
func TestPlainKindsTakeNoOptions(t *testing.T) {
	l, _, db := setup(t, false)
	if _, err := l.Act(context.Background(), Request{Action: backends.ActionSnapshot, SandboxID: sbID}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Act(snapshot) = %v; want it refused: a snapshot takes options", err)
	}
	for _, a := range []backends.Action{backends.ActionReset, backends.ActionQuarantine, backends.ActionRelease} {
		if !Plain(a) {
			t.Errorf("%s is not plain", a)
		}
	}
	// The fake backend has no Resetter: the layer refuses it, journaled under reset.
	if _, err := l.Act(context.Background(), Request{Action: backends.ActionReset, SandboxID: sbID, Confirmed: true, Identity: bob}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Act(reset) on a backend without reset = %v", err)
	}
	es := journal(t, db)
	if last := es[len(es)-1]; last.Action != string(backends.ActionReset) || last.Outcome != state.OutcomeRefused || last.Operator != "bob" {
		t.Errorf("Act(reset) journaled as %+v", last)
	}
}
