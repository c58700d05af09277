package daemon_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/operators"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// operatorKinds is the README's roles table for an operator; an admin takes every kind, a
// viewer none.
var operatorKinds = []backends.Action{backends.ActionSnapshot, backends.ActionRevert, backends.ActionProbe, backends.ActionExec,
	backends.ActionCopy, backends.ActionShell, backends.ActionQuarantine, backends.ActionVerify}

// TestEveryKindForItsRolesAtTheLayer: each role × kind through the daemon's layer, whatever
// the client: what the role may not take is refused there and journaled refused with the
// whole identity; what it may take is not refused for the role (the fleet may still not
// support it).
func TestEveryKindForItsRolesAtTheLayer(t *testing.T) {
	r := newTeamRig(t)
	for _, c := range []struct {
		name    string
		allowed func(backends.Action) bool
	}{
		{"vic", func(backends.Action) bool { return false }},
		{"bob", func(a backends.Action) bool { return slices.Contains(operatorKinds, a) }},
		{"alice", func(backends.Action) bool { return true }},
	} {
		who := r.who[c.name]
		for _, k := range backends.Actions() {
			target := r.ids[3]
			var err error
			if k == backends.ActionVerify {
				target = "verify:/specs/compose.yaml"
				err = r.d.Layer().Verify(context.Background(), action.Request{SandboxID: target, Identity: who},
					func(context.Context) (map[string]string, error) { return nil, nil })
			} else {
				err = r.d.Layer().Run(context.Background(), action.Request{Action: k, SandboxID: target, Identity: who, Confirmed: true},
					func(context.Context, backends.Backend, backends.Sandbox) error { return nil })
			}
			if refused := errors.Is(err, operators.ErrRole); refused == c.allowed(k) {
				t.Errorf("%s %s = %v; want refused for the role: %v", c.name, k, err, !c.allowed(k))
				continue
			}
			if c.allowed(k) {
				continue
			}
			e := r.outcome(t, string(k), target)
			if e.Outcome != state.OutcomeRefused || !strings.Contains(e.Error, c.name+" is ") {
				t.Errorf("%s %s journaled as %+v; want refused naming the role", c.name, k, e)
			}
			identified(t, e, who)
		}
	}
}

// TestCancelByRole: a viewer cannot cancel what runs on a sandbox (refused, journaled with
// the viewer); an operator may cancel another's action, and the cancellation is journaled
// with who cancelled and whose action it was.
func TestCancelByRole(t *testing.T) {
	r := newTeamRig(t)
	vic, bob, alice := r.who["vic"], r.who["bob"], r.who["alice"]
	done := make(chan error, 1)
	go func() {
		_, err := r.d.Layer().Snapshot(r.d.Context(), action.Request{SandboxID: r.ids[0], Identity: alice}, backends.SnapshotOptions{Name: "slow"})
		done <- err
	}()
	select {
	case <-r.fleet.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow snapshot did not start")
	}
	ok, err := r.d.Layer().Cancel(vic, r.ids[0])
	if ok || !errors.Is(err, operators.ErrRole) {
		t.Fatalf("viewer cancel = %v, %v; want a role refusal", ok, err)
	}
	e := r.outcome(t, action.ActionCancel, r.ids[0])
	if e.Outcome != state.OutcomeRefused || !strings.Contains(e.Error, "vic is viewer") {
		t.Errorf("viewer cancel journaled as %+v", e)
	}
	identified(t, e, vic)
	if _, busy := r.d.Layer().Busy(r.ids[0]); !busy {
		t.Fatal("a refused cancel stopped the action")
	}

	if ok, err := r.d.Layer().Cancel(bob, r.ids[0]); !ok || err != nil {
		t.Fatalf("operator cancel = %v, %v", ok, err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled snapshot = %v", err)
	}
	e = r.outcome(t, action.ActionCancel, r.ids[0])
	if e.Outcome != state.OutcomeOK || e.Params["action"] != "snapshot" || e.Params["started_by"] != "alice" {
		t.Errorf("operator cancel journaled as %+v; want ok naming alice's snapshot", e)
	}
	identified(t, e, bob)
	if got := r.outcome(t, string(backends.ActionSnapshot), r.ids[0]); got.Outcome != state.OutcomeCancelled {
		t.Errorf("the snapshot's outcome = %+v; want cancelled", got)
	}
}

// TestHeldLockRefusalIsJournaled: an action refused because another holds the sandbox's lock
// is journaled with who asked and who holds it.
func TestHeldLockRefusalIsJournaled(t *testing.T) {
	r := newTeamRig(t)
	bob, alice := r.who["bob"], r.who["alice"]
	go r.d.Layer().Snapshot(r.d.Context(), action.Request{SandboxID: r.ids[1], Identity: bob}, backends.SnapshotOptions{Name: "slow"})
	select {
	case <-r.fleet.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow snapshot did not start")
	}
	_, err := r.d.Layer().Snapshot(context.Background(), action.Request{SandboxID: r.ids[1], Identity: alice}, backends.SnapshotOptions{Name: "quick"})
	if !errors.Is(err, action.ErrBusy) {
		t.Fatalf("snapshot of a locked sandbox = %v; want ErrBusy", err)
	}
	e := r.outcome(t, string(backends.ActionSnapshot), r.ids[1])
	if e.Outcome != state.OutcomeRefused || e.Params["held_by"] != "bob" || e.Params["held_action"] != "snapshot" || !strings.Contains(e.Error, "by bob") {
		t.Errorf("busy refusal journaled as %+v; want refused naming bob's snapshot", e)
	}
	identified(t, e, alice)
	r.d.Layer().Cancel(alice, r.ids[1])
}

// TestSessionKeysFollowTheRole: each session's workbench has the keys of the kinds its role
// may take (bulk ones only for an admin), cancel for a role that acts, and the author's verify
// when the daemon can verify and the role may.
func TestSessionKeysFollowTheRole(t *testing.T) {
	r := newTeamRig(t, func(o *daemon.Options) {
		o.Verify = func(context.Context, action.Identity, verify.Options) verify.Result { return verify.Result{} }
	})
	for _, c := range []struct {
		role operators.Role
		name string
		has  []keymap.Name
		not  []keymap.Name
	}{
		{operators.Viewer, "vic", nil, []keymap.Name{keymap.Snapshot, keymap.Shell, keymap.Quarantine, keymap.Cancel, keymap.Verify, keymap.Release}},
		{operators.Operator, "bob", []keymap.Name{keymap.Snapshot, keymap.Revert, keymap.Probe, keymap.Shell, keymap.Quarantine, keymap.Cancel, keymap.Verify},
			[]keymap.Name{keymap.Teardown, keymap.Release, keymap.Reset}},
		{operators.Admin, "alice", []keymap.Name{keymap.Teardown, keymap.Release, keymap.Reset, keymap.Probe, keymap.Shell, keymap.Verify}, nil},
	} {
		s := r.d.Hub().Join(r.who[c.name], c.role, func() {})
		km := r.d.Model(s).Keys()
		for _, n := range c.has {
			if !km.Has(n) {
				t.Errorf("%s's session lacks %s", c.role, n)
			}
		}
		for _, n := range c.not {
			if km.Has(n) {
				t.Errorf("%s's session has %s", c.role, n)
			}
		}
		// A session hosts the shell like the local workbench: the key, where the role has it,
		// is not disabled for being in a team session.
		if b, ok := km.Get(keymap.Shell); ok && strings.Contains(b.Disabled(keymap.Selection{Sandbox: r.ids[0]}), "team session") {
			t.Errorf("%s's shell key is disabled in a team session: %q", c.role, b.Disabled(keymap.Selection{Sandbox: r.ids[0]}))
		}
		// A bulk kind's key acts on the marked sandboxes only for a role that may act in bulk.
		if b, ok := km.Get(keymap.Probe); ok && b.Bulk != c.role.Bulk() {
			t.Errorf("%s's probe key: bulk %v", c.role, b.Bulk)
		}
		s.Leave()
	}
}
