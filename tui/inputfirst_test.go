package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
)

func TestMarkInputMarksOnlyTheOperatorsInput(t *testing.T) {
	for _, c := range []struct {
		name string
		msg  tea.Msg
		want bool
	}{
		{"key", tea.KeyPressMsg{Code: 'j'}, true},
		{"click", tea.MouseClickMsg{X: 1, Y: 1}, true},
		{"wheel", tea.MouseWheelMsg{}, true},
		{"paste", tea.PasteMsg{Content: "x"}, true},
		{"resize", tea.WindowSizeMsg{Width: 80, Height: 24}, false},
		{"key release", tea.KeyReleaseMsg{Code: 'j'}, false},
		{"a backend's event", struct{}{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s inputfirst.Signal
			if got := markInput(&s)(nil, c.msg); got != c.msg {
				t.Fatalf("the filter changed %T into %T", c.msg, got)
			}
			if got := s.ActiveWithin(time.Hour); got != c.want { // an hour: a slow machine must not fail it
				t.Fatalf("after %T the signal is active=%v, want %v", c.msg, got, c.want)
			}
		})
	}
}
