package screen

import (
	"testing"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// The cached footer is the footer: it follows a guard's answer for the selection, the width and
// a different keymap, and never serves the last frame's line for a changed one.
func TestCachedFooterFollowsWhatItShows(t *testing.T) {
	km := keymap.Default()
	km.Guard(keymap.Snapshot, func(sel keymap.Selection) string {
		if sel.Sandbox == "" {
			return "no sandbox selected"
		}
		return ""
	})
	names := []keymap.Name{keymap.Open, keymap.Snapshot, keymap.Teardown, keymap.Quit}
	var fc FooterCache
	c := Context{Keys: km, Theme: theme.Dark256(), Width: 120}
	steps := []struct {
		name string
		sel  keymap.Selection
		edit func()
	}{
		{"first", keymap.Selection{Sandbox: "a"}, func() {}},
		{"same again", keymap.Selection{Sandbox: "a"}, func() {}},
		{"guard disables", keymap.Selection{}, func() {}},
		{"narrower", keymap.Selection{}, func() { c.Width = 30 }},
		{"other keymap", keymap.Selection{Sandbox: "b"}, func() {
			c.Keys = km.Without(func(b keymap.Binding) bool { return b.Name == keymap.Teardown })
		}},
	}
	seen := map[string]bool{}
	for _, s := range steps {
		s.edit()
		got, want := c.CachedFooter(&fc, s.sel, names...), c.Footer(s.sel, names...)
		if got != want {
			t.Fatalf("%s: cached footer\n%q\nwant\n%q", s.name, got, want)
		}
		seen[got] = true
	}
	if len(seen) != 4 {
		t.Fatalf("the steps should show 4 different footers, saw %d", len(seen))
	}
}
