package tui

import (
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// TestEveryKeyedKindHasAFlow: a kind that declares a key can be taken from it (its own flow or
// the generic one), names its running form from its declaration, and a team session keeps its
// key exactly when the role's Allow does.
func TestEveryKeyedKindHasAFlow(t *testing.T) {
	km := keymap.Default()
	for _, k := range backends.Kinds() {
		if Gerund(k.Kind) != k.Gerund {
			t.Errorf("Gerund(%s) = %q; declared %q", k.Kind, Gerund(k.Kind), k.Gerund)
		}
		if k.Key == "" {
			continue
		}
		n := keymap.ActionName(k.Kind)
		if flows[n] == nil {
			t.Errorf("%s: key %q runs no flow", k.Kind, k.Key)
		}
		for _, allowed := range []bool{false, true} {
			team := TeamOptions{Allow: func(a backends.Action, bulk bool) bool { return a != k.Kind || allowed }}
			if got := team.teamKeys(km).Has(n); got != allowed {
				t.Errorf("%s: team session has its key %v; the role allows it %v", k.Kind, got, allowed)
			}
		}
	}
}
