// Package dialog is rangekeeper's modal: confirmations that open on Cancel, typed confirmations
// (the sandbox name), optional text prompts and pickers, drawn over the screen below. Its keys
// come from the keymap; it owns no I/O: its opener's OnAccept runs the action as a command.
package dialog

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/lineedit"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// Kind selects the dialog's behaviour.
type Kind int

const (
	// Confirm has Cancel and OK buttons; Cancel has focus when it opens.
	Confirm Kind = iota
	// Typed requires Require to be typed exactly before OK is accepted.
	Typed
	// Prompt asks for optional text; enter accepts, esc cancels.
	Prompt
	// Picker chooses one of Items.
	Picker
)

// Result is what the operator decided.
type Result int

const (
	Pending Result = iota
	Cancelled
	Accepted
)

// Model is one open dialog. Whoever opens it says what happens on each outcome; the dialog pops
// itself first, so OnAccept may open the next one (a picker leading to a confirmation).
type Model struct {
	Kind    Kind
	Title   string
	Body    []string // what will happen, including what will be called
	Require string   // Typed: the exact text to type
	Items   []string // Picker: rows shown
	Danger  bool
	Value   string // Prompt: the starting text

	OnAccept func(c *screen.Context, d *Model) tea.Cmd
	OnCancel func(c *screen.Context, d *Model) tea.Cmd

	input   *lineedit.Model
	Cursor  int  // Picker: highlighted item
	OK      bool // focus on OK (false: Cancel)
	Message string
}

func (m *Model) field() *lineedit.Model {
	if m.input == nil {
		in := lineedit.New(m.Value)
		m.input = &in
	}
	return m.input
}

// Input is the typed text (Prompt, Typed).
func (m *Model) Input() string { return m.field().Value() }

// Typing: a Prompt or a Typed confirmation takes letters as text.
func (m *Model) Typing() bool { return m.Kind == Typed || m.Kind == Prompt }

// Bindings are the keys a dialog answers; it is modal, so nothing else is live.
func (m *Model) Bindings() []keymap.Name {
	return []keymap.Name{keymap.Up, keymap.Down, keymap.Open, keymap.Back, keymap.Quit, keymap.Focus, keymap.Yes, keymap.No}
}

// Decide handles one key; it returns the dialog and the decision so far.
func (m Model) Decide(km *keymap.Map, msg tea.KeyPressMsg) (Model, Result) {
	is := km.Is
	if m.Typing() {
		is = km.IsControl
	}
	if is(msg, keymap.Back) || is(msg, keymap.Quit) {
		return m, Cancelled
	}
	switch m.Kind {
	case Picker:
		switch {
		case is(msg, keymap.Up):
			m.Cursor = max(0, m.Cursor-1)
		case is(msg, keymap.Down):
			m.Cursor = min(len(m.Items)-1, m.Cursor+1)
		case is(msg, keymap.Open):
			if len(m.Items) == 0 {
				return m, Cancelled
			}
			return m, Accepted
		}
		return m, Pending
	case Prompt:
		if is(msg, keymap.Open) {
			return m, Accepted
		}
		m.field().Update(msg)
		return m, Pending
	}
	// Confirm and Typed: the focus key moves between the buttons; open presses the focused one.
	switch {
	case is(msg, keymap.Focus):
		m.OK = !m.OK
		return m, Pending
	case is(msg, keymap.Open):
		if !m.OK {
			return m, Cancelled
		}
		if m.Kind == Typed && m.Input() != m.Require {
			m.Message = fmt.Sprintf("refused: typed %q, expected %q", m.Input(), m.Require)
			m.OK = false
			return m, Pending
		}
		return m, Accepted
	}
	if m.Kind == Typed {
		m.field().Update(msg)
		m.Message = ""
	} else if is(msg, keymap.Yes) {
		m.OK = true
	} else if is(msg, keymap.No) {
		return m, Cancelled
	}
	return m, Pending
}

// Update runs the dialog as a modal screen: on a decision it pops itself, then runs the outcome.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		if m.Typing() {
			m.field().Update(msg)
		}
	case tea.KeyPressMsg:
		d, res := m.Decide(c.Keys, msg)
		*m = d
		switch res {
		case Cancelled:
			c.Pop()
			if m.OnCancel != nil {
				return m.OnCancel(c, m)
			}
		case Accepted:
			c.Pop()
			if m.OnAccept != nil {
				return m.OnAccept(c, m)
			}
		}
	}
	return nil
}

// View is the box alone; Compose draws it over the screen below.
func (m *Model) View(c *screen.Context) string {
	return screen.Fit(m.Box(c.Theme, c.Keys, c.Width), c.Width, c.Height)
}

// Compose draws the dialog centred over the screen below it.
func (m *Model) Compose(below string, c *screen.Context) string {
	return Overlay(below, m.Box(c.Theme, c.Keys, c.Width), c.Width, c.Height)
}

// Box renders the dialog as lines no wider than w.
func (m Model) Box(th theme.Theme, km *keymap.Map, w int) []string {
	inner := min(w-4, 76)
	var body []string
	title := th.Title
	if m.Danger {
		title = th.Err
	}
	body = append(body, title.Render(ansi.Truncate(m.Title, inner, "~")), "")
	for _, l := range m.Body {
		body = append(body, strings.Split(ansi.Wrap(l, inner, " "), "\n")...)
	}
	switch m.Kind {
	case Picker:
		body = append(body, "")
		if len(m.Items) == 0 {
			body = append(body, th.Dim.Render("(nothing to choose)"))
		}
		// Show a window of at most 8 items around the cursor.
		start := max(0, m.Cursor-7)
		for i := start; i < len(m.Items) && i < start+8; i++ {
			line := "  " + m.Items[i]
			if i == m.Cursor {
				line = th.Selected.Render(pad("> "+m.Items[i], inner))
			}
			body = append(body, ansi.Truncate(line, inner, "~"))
		}
		body = append(body, "", th.Dim.Render(screen.Hints(hint(km, keymap.Open, "choose"), hint(km, keymap.Back, "cancel"))))
	case Prompt:
		body = append(body, "", "> "+m.field().View(th), "", th.Dim.Render(screen.Hints(hint(km, keymap.Open, "accept"), hint(km, keymap.Back, "cancel"))))
	default:
		if m.Kind == Typed {
			body = append(body, "", fmt.Sprintf("type %s to confirm:", th.Key.Render(m.Require)), "> "+m.field().View(th))
		}
		cancel, ok := "[ Cancel ]", "[ OK ]"
		if m.OK {
			ok = th.Selected.Render(ok)
		} else {
			cancel = th.Selected.Render(cancel)
		}
		body = append(body, "", cancel+"  "+ok, th.Dim.Render(screen.Hints(hint(km, keymap.Focus, "switch"), hint(km, keymap.Open, "press"), hint(km, keymap.Back, "cancel"))))
	}
	if m.Message != "" {
		body = append(body, th.Err.Render(ansi.Truncate(m.Message, inner, "~")))
	}
	border := th.Border
	out := []string{border.Render("+" + strings.Repeat("-", inner+2) + "+")}
	for _, l := range body {
		out = append(out, border.Render("|")+" "+pad(l, inner)+" "+border.Render("|"))
	}
	out = append(out, border.Render("+"+strings.Repeat("-", inner+2)+"+"))
	return out
}

func hint(km *keymap.Map, n keymap.Name, help string) string {
	if l := km.Label(n); l != "" {
		return l + " " + help
	}
	return ""
}

func pad(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return ansi.Truncate(s, w, "~")
}

// Overlay draws box centred over the background lines (whole lines are replaced: cheap and
// ANSI-safe).
func Overlay(bg string, box []string, w, h int) string {
	lines := strings.Split(bg, "\n")
	for len(lines) < h {
		lines = append(lines, "")
	}
	top := max(0, (h-len(box))/2)
	left := max(0, (w-ansi.StringWidth(box[0]))/2)
	for i, l := range box {
		if top+i >= len(lines) {
			break
		}
		lines[top+i] = ansi.Truncate(strings.Repeat(" ", left)+l, w, "~")
	}
	return strings.Join(lines, "\n")
}
