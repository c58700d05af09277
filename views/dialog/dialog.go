// Package dialog is rangekeeper's modal: confirmations that open on Cancel, typed confirmations
// (the sandbox name), optional text prompts and pickers. It owns no I/O: the app reads the
// result and runs the action as a command.
package dialog

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

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

// Model is one open dialog. Purpose is the app's tag for what to do on Accept; Payload carries
// its arguments (sandbox IDs, snapshot ID...).
type Model struct {
	Kind    Kind
	Title   string
	Body    []string // what will happen, including what will be called
	Require string   // Typed: the exact text to type
	Items   []string // Picker: rows shown
	Purpose string
	Payload []string
	Danger  bool

	Input   string
	Cursor  int  // Picker: highlighted item
	OK      bool // focus on OK (false: Cancel)
	Message string
}

// Value is the typed text (Prompt, Typed) or the picked index as text is not needed: use Cursor.
func (m Model) Value() string { return m.Input }

// Update handles one key; it returns the dialog and the decision so far.
func (m Model) Update(msg tea.KeyPressMsg) (Model, Result) {
	key := msg.String()
	switch key {
	case "esc", "ctrl+c":
		return m, Cancelled
	}
	switch m.Kind {
	case Picker:
		switch key {
		case "up", "k":
			m.Cursor = max(0, m.Cursor-1)
		case "down", "j":
			m.Cursor = min(len(m.Items)-1, m.Cursor+1)
		case "enter":
			if len(m.Items) == 0 {
				return m, Cancelled
			}
			return m, Accepted
		case "q":
			return m, Cancelled
		}
		return m, Pending
	case Prompt:
		if key == "enter" {
			return m, Accepted
		}
		m.Input = edit(m.Input, msg)
		return m, Pending
	}
	// Confirm and Typed: tab/arrows move focus; enter activates the focused button.
	switch key {
	case "tab", "shift+tab", "left", "right":
		m.OK = !m.OK
		return m, Pending
	case "enter":
		if !m.OK {
			return m, Cancelled
		}
		if m.Kind == Typed && m.Input != m.Require {
			m.Message = fmt.Sprintf("refused: typed %q, expected %q", m.Input, m.Require)
			m.OK = false
			return m, Pending
		}
		return m, Accepted
	}
	if m.Kind == Typed {
		m.Input = edit(m.Input, msg)
		m.Message = ""
	} else if key == "y" {
		m.OK = true
	} else if key == "n" {
		return m, Cancelled
	}
	return m, Pending
}

func edit(s string, msg tea.KeyPressMsg) string {
	switch msg.String() {
	case "backspace":
		if r := []rune(s); len(r) > 0 {
			return string(r[:len(r)-1])
		}
		return s
	case "ctrl+u":
		return ""
	}
	if msg.Text != "" && len(s) < 256 {
		return s + msg.Text
	}
	return s
}

// Box renders the dialog as lines no wider than w.
func (m Model) Box(th theme.Theme, w int) []string {
	inner := min(w-4, 76)
	var body []string
	title := th.Title
	if m.Danger {
		title = th.Err
	}
	body = append(body, title.Render(ansi.Truncate(m.Title, inner, "~")), "")
	for _, l := range m.Body {
		for _, wl := range strings.Split(ansi.Wrap(l, inner, " "), "\n") {
			body = append(body, wl)
		}
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
		body = append(body, "", th.Dim.Render("enter choose  esc cancel"))
	case Prompt:
		body = append(body, "", "> "+m.Input+"_", "", th.Dim.Render("enter accept  esc cancel"))
	default:
		if m.Kind == Typed {
			body = append(body, "", fmt.Sprintf("type %s to confirm:", th.Key.Render(m.Require)), "> "+m.Input+"_")
		}
		cancel, ok := "[ Cancel ]", "[ OK ]"
		if m.OK {
			ok = th.Selected.Render(ok)
		} else {
			cancel = th.Selected.Render(cancel)
		}
		body = append(body, "", cancel+"  "+ok, th.Dim.Render("tab switch  enter press  esc cancel"))
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
