package author

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/probereport"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Screen is the author on the workbench's stack; the same Model runs alone as `rangekeeper
// author`. Quitting it closes the screen.
type Screen struct{ m *Model }

// NewScreen builds the embedded author.
func NewScreen(opts Options) *Screen {
	opts.Embedded = true
	return &Screen{m: newModel(opts)}
}

// Model is the author behind the screen (tests).
func (s *Screen) Model() *Model { return s.m }

// Open lints the starting draft, or loads the file to open.
func (s *Screen) Open(*screen.Context) tea.Cmd { return s.m.Init() }

// Bindings are the author's keys.
func (s *Screen) Bindings() []keymap.Name { return bindings }

// Typing: a field or the save path is being edited.
func (s *Screen) Typing() bool { return s.m.Typing() }

// Update follows the program's keys and size, and closes the screen when the author quits.
func (s *Screen) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	s.m.keys, s.m.width, s.m.height = c.Keys, c.Width, c.Height
	_, cmd := s.m.Update(msg)
	if res, ok := s.m.TakeVerified(); ok {
		c.Push(probereport.ForVerify(res))
	}
	if s.m.closed {
		s.m.closed = false
		c.Pop()
	}
	return cmd
}

// View renders the author at the context's size.
func (s *Screen) View(c *screen.Context) string {
	s.m.keys, s.m.width, s.m.height = c.Keys, c.Width, c.Height
	return screen.Fit(strings.Split(strings.TrimRight(s.m.render(), "\n"), "\n"), c.Width, c.Height)
}
