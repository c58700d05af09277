package operators

import (
	"errors"
	"slices"
	"testing"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
)

// TestRoleTable is the README's roles table: what each role may take, kind by kind. It is
// written out, not derived, so a tier changed in a declaration shows up here as a policy change.
func TestRoleTable(t *testing.T) {
	operator := []backends.Action{backends.ActionCopy, backends.ActionExec, backends.ActionProbe, backends.ActionQuarantine,
		backends.ActionRevert, backends.ActionShell, backends.ActionSnapshot, backends.ActionVerify}
	admin := append(slices.Clone(operator), backends.ActionRecover, backends.ActionRelease, backends.ActionReset,
		backends.ActionTeardown, backends.ActionDeleteSnapshot)
	slices.Sort(admin)
	for _, c := range []struct {
		role       Role
		want       []backends.Action
		bulk, acts bool
	}{
		{Viewer, nil, false, false},
		{Operator, operator, false, true},
		{Admin, admin, true, true},
	} {
		if got := c.role.Actions(); !slices.Equal(got, c.want) {
			t.Errorf("%s.Actions() = %v; want %v", c.role, got, c.want)
		}
		if c.role.Bulk() != c.bulk || c.role.MayAct() != c.acts {
			t.Errorf("%s: bulk %v, acts %v; want %v, %v", c.role, c.role.Bulk(), c.role.MayAct(), c.bulk, c.acts)
		}
		for _, a := range backends.Actions() {
			if got := c.role.Allows(a); got != slices.Contains(c.want, a) {
				t.Errorf("%s.Allows(%s) = %v", c.role, a, got)
			}
		}
	}
	if Admin.Allows("nonesuch") {
		t.Error("an undeclared kind is allowed")
	}
	if !slices.Equal(Admin.Actions(), backends.Actions()) {
		t.Error("an admin does not take every kind")
	}
}

// Every tier is some role's highest, so no declared kind is out of every role's reach.
func TestEveryTierHasARole(t *testing.T) {
	for _, tier := range backends.Tiers() {
		found := false
		for _, r := range Roles() {
			found = found || r.Tier() == tier
		}
		if !found {
			t.Errorf("no role's tier is %v", tier)
		}
	}
	for _, k := range backends.Kinds() {
		if least(k.Kind).Tier() != k.Tier {
			t.Errorf("%s: least role %s, declared tier %v", k.Kind, least(k.Kind), k.Tier)
		}
	}
}

func TestAuthorizeCancelAndAck(t *testing.T) {
	kv, lv := newKey(t)
	ko, lo := newKey(t)
	f, err := Parse("ops.yaml", []byte("operators:\n  - name: vic\n    role: viewer\n    keys: [\""+lv+"\"]\n  - name: ola\n    role: operator\n    keys: [\""+lo+"\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := Roster{File: func() *File { return f }}
	vic := action.Identity{Operator: "vic", Transport: action.TransportSSH, Fingerprint: Fingerprint(kv)}
	ola := action.Identity{Operator: "ola", Transport: action.TransportSSH, Fingerprint: Fingerprint(ko)}
	for _, c := range []struct {
		name string
		err  error
		want bool // refused
	}{
		{"viewer cancels", r.AuthorizeCancel(vic, backends.ActionTeardown), true},
		{"operator cancels an admin's teardown", r.AuthorizeCancel(ola, backends.ActionTeardown), false},
		{"viewer acks", r.AuthorizeAck(vic), true},
		{"operator acks", r.AuthorizeAck(ola), false},
		{"operator bulk probe", r.AuthorizeBulk(ola, backends.ActionProbe), true},
		{"operator release", r.Authorize(ola, backends.ActionRelease), true},
		{"operator quarantine", r.Authorize(ola, backends.ActionQuarantine), false},
		{"operator shell", r.Authorize(ola, backends.ActionShell), false},
	} {
		if refused := errors.Is(c.err, ErrRole); refused != c.want {
			t.Errorf("%s: %v; want refused=%v", c.name, c.err, c.want)
		}
	}
}
