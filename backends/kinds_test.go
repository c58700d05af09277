package backends

import (
	"slices"
	"testing"
)

// TestEveryKindIsDeclaredWhole: the layers above derive keys, flows, gerunds, roles and socket
// commands from the declarations, so a kind missing a field would silently lose one of them.
func TestEveryKindIsDeclaredWhole(t *testing.T) {
	keys := map[string]Action{}
	for _, k := range Kinds() {
		if k.Kind == "" {
			t.Fatal("a declaration names no kind")
		}
		if k.Gerund == "" || k.Gerund == string(k.Kind)+" running" {
			t.Errorf("%s: no gerund", k.Kind)
		}
		if !slices.Contains(Tiers(), k.Tier) {
			t.Errorf("%s: tier %d is not one of Tiers()", k.Kind, k.Tier)
		}
		if k.Implemented == nil && len(k.Needs) == 0 {
			t.Errorf("%s: neither Implemented nor Needs: Supports would allow it on every backend", k.Kind)
		}
		if k.Remote && k.Verb == "" {
			t.Errorf("%s routes to the daemon but has no CLI verb", k.Kind)
		}
		if (k.Key == "") != (k.Help == "") {
			t.Errorf("%s: key %q with help %q: a binding needs both", k.Kind, k.Key, k.Help)
		}
		if prev, dup := keys[k.Key]; k.Key != "" && dup {
			t.Errorf("%s and %s both bind %q", prev, k.Kind, k.Key)
		}
		keys[k.Key] = k.Kind
		if k.Confirm && !k.Mutating {
			t.Errorf("%s asks for confirmation but changes nothing", k.Kind)
		}
		if len(k.Warning) > 0 && !k.Kind.NeedsConfirm() {
			t.Errorf("%s has a warning no confirmation shows", k.Kind)
		}
		if !k.Kind.Mutating() {
			t.Errorf("%s: every action kind changes a sandbox or the host; a read is not a kind", k.Kind)
		}
		for _, n := range k.Needs {
			if _, ok := n.Spec(); !ok {
				t.Errorf("%s needs %s, which is not declared", k.Kind, n)
			}
		}
		if got, ok := k.Kind.Spec(); !ok || got.Kind != k.Kind {
			t.Errorf("Spec(%s) = %v, %v", k.Kind, got.Kind, ok)
		}
	}
	if len(Actions()) != len(Kinds()) {
		t.Errorf("Actions() lists %d, Kinds() %d: a kind is declared twice", len(Actions()), len(Kinds()))
	}
}

func TestDerivedAnswers(t *testing.T) {
	for _, c := range []struct {
		a                              Action
		destructive, mutating, confirm bool
		tier                           Tier
		gerund                         string
	}{
		{ActionSnapshot, false, true, false, TierOperator, "snapshotting"},
		{ActionTeardown, true, true, true, TierAdmin, "tearing down"},
		{ActionQuarantine, false, true, true, TierOperator, "quarantining"},
		{ActionRelease, false, true, true, TierAdmin, "releasing"},
		{ActionShell, false, true, false, TierOperator, "in a shell"},
		{ActionVerify, false, true, false, TierOperator, "verifying"},
		{"nonesuch", false, false, false, 0, "nonesuch running"},
	} {
		if c.a.Destructive() != c.destructive || c.a.Mutating() != c.mutating || c.a.NeedsConfirm() != c.confirm {
			t.Errorf("%s: destructive %v mutating %v confirm %v; want %v %v %v", c.a, c.a.Destructive(), c.a.Mutating(),
				c.a.NeedsConfirm(), c.destructive, c.mutating, c.confirm)
		}
		if c.a.Tier() != c.tier || c.a.Gerund() != c.gerund {
			t.Errorf("%s: tier %v gerund %q; want %v %q", c.a, c.a.Tier(), c.a.Gerund(), c.tier, c.gerund)
		}
	}
}

// The daemon's socket serves exactly these action verbs (the CLI adds its reads: ls, journal, alerts).
func TestRemoteVerbs(t *testing.T) {
	want := []string{"exec", "probe", "quarantine", "release", "revert", "snapshot", "snapshots", "teardown"}
	if got := RemoteVerbs(); !slices.Equal(got, want) {
		t.Errorf("RemoteVerbs() = %v; want %v", got, want)
	}
}
