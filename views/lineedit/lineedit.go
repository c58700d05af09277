// Package lineedit is the one line editor every text field uses (the fleet filter, dialogs, the
// command line, the author's fields and save prompt): bubbles' textinput does the editing, so
// ctrl+u (delete to the start), ctrl+w (delete a word), cursor movement (left/right, home/end,
// ctrl+a/e, alt+b/f) and bracketed paste behave the same everywhere. Enter and esc belong to the
// owner (the keymap's open and back bindings). It draws itself with the theme: the cursor is a
// "_" at the end of the text and reverse video inside it, so it shows without colour too.
package lineedit

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/views/theme"
)

// MaxLen bounds every field: nothing an operator types here is longer.
const MaxLen = 256

// Model is one focused line.
type Model struct{ in textinput.Model }

// New returns a focused editor holding value, the cursor at its end.
func New(value string) Model {
	in := textinput.New()
	in.Prompt = ""
	in.CharLimit = MaxLen
	in.SetVirtualCursor(false) // drawn by View; no blink timer, so an idle input costs no frames
	// The clipboard binding would read the clipboard of the host rangekeeper runs on, which over
	// SSH is not the operator's: terminal (bracketed) paste is the way in.
	in.KeyMap.Paste = key.NewBinding(key.WithDisabled())
	in.Focus()
	in.SetValue(value)
	in.CursorEnd()
	return Model{in: in}
}

// Update edits on a key press or a paste; other messages are ignored.
func (m *Model) Update(msg tea.Msg) {
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg:
		m.in, _ = m.in.Update(msg)
	}
}

// Value is the text.
func (m Model) Value() string { return m.in.Value() }

// SetValue replaces the text and puts the cursor at its end.
func (m *Model) SetValue(s string) {
	m.in.SetValue(s)
	m.in.CursorEnd()
}

// View draws the text with its cursor.
func (m Model) View(th theme.Theme) string {
	r := []rune(m.in.Value())
	pos := min(max(m.in.Position(), 0), len(r))
	if pos == len(r) {
		return string(r) + "_"
	}
	return string(r[:pos]) + th.Selected.Render(string(r[pos])) + string(r[pos+1:])
}
