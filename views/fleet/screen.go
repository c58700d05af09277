package fleet

import (
	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Screen is the fleet table as the root of the program's stack.
type Screen struct {
	*Model
	// OnOpen runs when the operator opens a row (the program pushes its detail).
	OnOpen func(c *screen.Context, r *Row) tea.Cmd
}

var _ interface {
	screen.Screen
	screen.Selector
	screen.Typing
} = (*Screen)(nil)

// Bindings are the table's own keys and the sandbox actions the program runs on its selection.
func (s *Screen) Bindings() []keymap.Name {
	return []keymap.Name{keymap.Up, keymap.Down, keymap.Top, keymap.Bottom, keymap.PageUp, keymap.PageDown,
		keymap.Open, keymap.Back, keymap.Expand, keymap.Filter, keymap.Sort, keymap.Reverse, keymap.Group, keymap.Select,
		keymap.Snapshot, keymap.Revert, keymap.Teardown, keymap.Reset, keymap.Probe, keymap.Copy,
		keymap.Shell, keymap.Quarantine, keymap.Release}
}

// Typing: while the filter has focus the table takes letters as filter text.
func (s *Screen) Typing() bool { return s.Filtering() }

// Update keeps the table's keys and theme the program's and handles a message.
func (s *Screen) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	s.Keys, s.Theme, s.Status = c.Keys, c.Theme, c.Status
	if k, ok := msg.(tea.KeyPressMsg); ok && !s.Filtering() && c.Keys.Is(k, keymap.Open) {
		r := s.Selected()
		if r == nil {
			c.SetStatus("nothing selected")
			return nil
		}
		if s.OnOpen != nil {
			return s.OnOpen(c, r)
		}
		return nil
	}
	var cmd tea.Cmd
	*s.Model, cmd = s.Model.Update(msg)
	return cmd
}

// View renders the table at the context's size.
func (s *Screen) View(c *screen.Context) string {
	s.Keys, s.Theme, s.Status = c.Keys, c.Theme, c.Status
	if s.width != c.Width || s.height != c.Height {
		s.SetSize(c.Width, c.Height)
	}
	return s.Model.View()
}
