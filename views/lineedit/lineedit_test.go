package lineedit

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

func press(s string) tea.KeyPressMsg { return tuitest.Key(s) }

func TestOneEditingBehaviourEverywhere(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start string
		keys  []string
		paste string
		want  string
		view  string
	}{
		{name: "typing appends", start: "", keys: []string{"a", "b"}, want: "ab", view: "ab_"},
		{name: "ctrl+u deletes to the start", start: "name=web", keys: []string{"ctrl+u"}, want: "", view: "_"},
		{name: "ctrl+u keeps what is after the cursor", start: "status=running", keys: []string{"left", "left", "ctrl+u"}, want: "ng", view: "ng"},
		{name: "ctrl+w deletes a word", start: "sort age", keys: []string{"ctrl+w"}, want: "sort ", view: "sort _"},
		{name: "backspace", start: "abc", keys: []string{"backspace"}, want: "ab"},
		{name: "cursor movement inserts mid-text", start: "ac", keys: []string{"left", "b"}, want: "abc", view: "abc"},
		{name: "home", start: "bc", keys: []string{"home", "a"}, want: "abc"},
		{name: "bracketed paste, newlines flattened", start: "x", paste: "a\nb", want: "xa b"},
		{name: "ctrl+v reads no clipboard", start: "x", keys: []string{"ctrl+v"}, want: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.start)
			for _, k := range tc.keys {
				m.Update(press(k))
			}
			if tc.paste != "" {
				m.Update(tea.PasteMsg{Content: tc.paste})
			}
			if m.Value() != tc.want {
				t.Errorf("value %q, want %q", m.Value(), tc.want)
			}
			if tc.view != "" {
				if got := ansi.Strip(m.View(theme.Plain())); got != tc.view {
					t.Errorf("view %q, want %q", got, tc.view)
				}
			}
		})
	}
	long := New("")
	for range MaxLen + 10 {
		long.Update(press("x"))
	}
	if len(long.Value()) != MaxLen {
		t.Errorf("field took %d characters, want at most %d", len(long.Value()), MaxLen)
	}
}
