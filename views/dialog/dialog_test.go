package dialog

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

func key(s string) tea.KeyPressMsg { return tuitest.Key(s) }

func run(m Model, keys ...string) (Model, Result) {
	res := Pending
	for _, k := range keys {
		m, res = m.Decide(keymap.Default(), key(k))
		if res != Pending {
			break
		}
	}
	return m, res
}

func TestDecisions(t *testing.T) {
	typed := Model{Kind: Typed, Require: "web"}
	tests := []struct {
		name string
		m    Model
		keys []string
		want Result
		msg  string
	}{
		{"confirm opens on cancel", Model{Kind: Confirm}, []string{"enter"}, Cancelled, ""},
		{"confirm tab then enter", Model{Kind: Confirm}, []string{"tab", "enter"}, Accepted, ""},
		{"confirm y then enter", Model{Kind: Confirm}, []string{"y", "enter"}, Accepted, ""},
		{"confirm n", Model{Kind: Confirm}, []string{"n"}, Cancelled, ""},
		{"typed wrong name refused", typed, []string{"w", "e", "tab", "enter"}, Pending, `refused: typed "we", expected "web"`},
		{"typed right name", typed, []string{"w", "e", "b", "tab", "enter"}, Accepted, ""},
		{"typed backspace fixes", typed, []string{"w", "e", "x", "backspace", "b", "tab", "enter"}, Accepted, ""},
		{"typed esc", typed, []string{"w", "esc"}, Cancelled, ""},
		{"typed focus stays cancel", typed, []string{"w", "e", "b", "enter"}, Cancelled, ""},
		{"prompt enter accepts empty", Model{Kind: Prompt}, []string{"enter"}, Accepted, ""},
		{"picker enter", Model{Kind: Picker, Items: []string{"a", "b"}}, []string{"down", "enter"}, Accepted, ""},
		{"picker empty cancels", Model{Kind: Picker}, []string{"enter"}, Cancelled, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, res := run(tc.m, tc.keys...)
			if res != tc.want {
				t.Fatalf("result %v, want %v", res, tc.want)
			}
			if m.Message != tc.msg {
				t.Errorf("message %q, want %q", m.Message, tc.msg)
			}
		})
	}
	m, _ := run(Model{Kind: Picker, Items: []string{"a", "b", "c"}}, "down", "down", "down")
	if m.Cursor != 2 {
		t.Errorf("picker cursor %d, want clamped at 2", m.Cursor)
	}
}

func TestBoxFitsAndOverlayKeepsSize(t *testing.T) {
	m := Model{Kind: Typed, Title: "tear down inspect-x?", Require: "inspect-x", Body: []string{strings.Repeat("long words here ", 20)}}
	for _, w := range []int{60, 80, 200} {
		box := m.Box(theme.Plain(), keymap.Default(), w)
		for _, l := range box {
			if n := ansi.StringWidth(l); n > w {
				t.Errorf("w=%d: line %d wide: %q", w, n, l)
			}
		}
		bg := strings.TrimSuffix(strings.Repeat(strings.Repeat("x", w)+"\n", 24), "\n")
		out := Overlay(bg, box, w, 24)
		if got := len(strings.Split(out, "\n")); got != 24 {
			t.Errorf("w=%d: overlay has %d lines, want 24", w, got)
		}
		if !strings.Contains(ansi.Strip(out), "type inspect-x to confirm") {
			t.Errorf("w=%d: overlay lacks the prompt", w)
		}
	}
}
