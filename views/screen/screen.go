// Package screen is the shape every workbench screen has: a context on the program's stack (the
// lazygit model) that updates on messages, renders itself at a size and names the bindings it
// answers. Screens are dumb about the program: they read what they need from a Context and ask
// for stack changes through it; the program (tui) owns the stack, the global bindings and every
// action. Optional interfaces add what some screens need: a selection the sandbox bindings act
// on, loading when opened, cleaning up a subscription when closed, drawing as a modal over the
// screen below, a text input that takes the letters.
package screen

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// Screen is one context on the stack.
type Screen interface {
	// Update handles a message. Keys reach only the screen on top, and only keys the program
	// does not answer itself (its own Bindings come first); every other message reaches every
	// screen on the stack, so a result finds the screen that asked for it. No I/O here: return
	// a command.
	Update(c *Context, msg tea.Msg) tea.Cmd
	// View renders exactly c.Height lines no wider than c.Width.
	View(c *Context) string
	// Bindings are the keymap bindings the screen answers, beyond the program's global ones;
	// they win over the global ones, and no two of them (with the global ones) share a key.
	Bindings() []keymap.Name
}

// Selector is a screen with a selection: the sandbox bindings (snapshot, teardown...) act on it.
type Selector interface {
	Selection() keymap.Selection
}

// Opener loads what it shows when pushed (the command runs off the UI goroutine).
type Opener interface {
	Open(c *Context) tea.Cmd
}

// Closer ends what the screen started (a sampling loop, a log stream) when it leaves the stack.
type Closer interface {
	Close()
}

// Modal draws over the screen below it and takes every key (dialogs, the command line).
type Modal interface {
	Compose(below string, c *Context) string
}

// Typing reports that a text input has focus: letters are text, and only control keys (enter,
// esc, tab, arrows, ctrl+…) can trigger bindings, the program's included.
type Typing interface {
	Typing() bool
}

// Refresher re-reads what an action may have changed (the journal, the detail's records).
type Refresher interface {
	Refresh(c *Context) tea.Cmd
}

// Tick is sent to every screen once a second (clocks, countdowns, the task list).
type Tick time.Time

// Context is what a screen reads during Update and View, and how it asks the program for stack
// changes, which are applied in order after Update returns.
type Context struct {
	Keys     *keymap.Map
	Theme    theme.Theme
	Width    int
	Height   int
	Now      time.Time
	ReadOnly bool
	Status   string // the program's one-line message (progress, results, refusals)

	ops []Op
}

// Op is a stack change a screen asked for.
type Op struct {
	Push   Screen // nil: pop
	Status *string
}

// Push opens s on top.
func (c *Context) Push(s Screen) { c.ops = append(c.ops, Op{Push: s}) }

// Pop closes the screen on top.
func (c *Context) Pop() { c.ops = append(c.ops, Op{}) }

// SetStatus replaces the program's status line.
func (c *Context) SetStatus(s string) { c.ops = append(c.ops, Op{Status: &s}) }

// TakeOps returns and clears the requested changes (the program calls it after Update).
func (c *Context) TakeOps() []Op {
	ops := c.ops
	c.ops = nil
	return ops
}

// Hint is "key help" for one binding from the keymap ("" when the binding does not exist, e.g.
// in read-only mode), so a remapped key is right in every hint.
func (c *Context) Hint(name keymap.Name, help ...string) string {
	b, ok := c.Keys.Get(name)
	if !ok {
		return ""
	}
	h := b.Help
	if len(help) > 0 {
		h = help[0]
	}
	return b.Label() + " " + h
}

// Hints joins hints for plain footers ("j/k scroll  esc back"); pairs such as Down+Up are
// written with Keys.Labels by the caller.
func Hints(hs ...string) string {
	var out []string
	for _, h := range hs {
		if strings.TrimSpace(h) != "" {
			out = append(out, h)
		}
	}
	return strings.Join(out, "  ")
}

// Footer renders the hints of names for sel: dangerous keys in their colour, bindings that cannot
// act on sel dimmed (their reason is in the help and on the status line when pressed).
func (c *Context) Footer(sel keymap.Selection, names ...keymap.Name) string {
	var parts []string
	for _, n := range names {
		b, ok := c.Keys.Get(n)
		if !ok {
			continue
		}
		if b.Disabled(sel) != "" {
			parts = append(parts, c.Theme.Disabled.Render(b.Label()+" "+b.Help))
			continue
		}
		key := c.Theme.Key
		if b.Dangerous {
			key = c.Theme.KeyDanger
		}
		parts = append(parts, key.Render(b.Label())+" "+b.Help)
	}
	return ansi.Truncate(strings.Join(parts, "  "), c.Width, "~")
}

// FooterCache remembers a screen's last footer: styling the hints is most of a cheap frame's
// cost, and the footer rarely changes between frames.
type FooterCache struct{ key, line string }

// CachedFooter is Footer, built again only when what it shows changed: the width, the theme,
// the keymap, or a hint's label or enabled state.
func (c *Context) CachedFooter(fc *FooterCache, sel keymap.Selection, names ...keymap.Name) string {
	var buf [256]byte
	key := fmt.Appendf(buf[:0], "%p\x00%s\x00%d", c.Keys, c.Theme.Name, c.Width)
	for _, n := range names {
		if b, ok := c.Keys.Get(n); ok {
			state := byte('e')
			if b.Disabled(sel) != "" {
				state = 'd'
			}
			key = append(append(append(key, 0), b.Label()...), state)
		}
	}
	if fc.line != "" && string(key) == fc.key {
		return fc.line
	}
	fc.key, fc.line = string(key), c.Footer(sel, names...)
	return fc.line
}

// StatusLine is the program's status message styled for the line above a footer ("" when none).
func (c *Context) StatusLine() string {
	if c.Status == "" {
		return ""
	}
	return c.Theme.Warn.Render(ansi.Truncate(c.Status, c.Width, "~"))
}

// Fit pads or cuts lines to exactly h lines no wider than w.
func Fit(lines []string, w, h int) string {
	for len(lines) < h {
		lines = append(lines, "")
	}
	lines = lines[:h]
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "~")
	}
	return strings.Join(lines, "\n")
}

// Move applies the keymap's navigation keys (up, down, top, bottom, page up, page down) to a
// position in [0, last]; page is one screen of rows.
func Move(km *keymap.Map, msg tea.KeyPressMsg, pos, page, last int) int {
	switch {
	case km.Is(msg, keymap.Down):
		pos++
	case km.Is(msg, keymap.Up):
		pos--
	case km.Is(msg, keymap.Top):
		pos = 0
	case km.Is(msg, keymap.Bottom):
		pos = last
	case km.Is(msg, keymap.PageDown):
		pos += page
	case km.Is(msg, keymap.PageUp):
		pos -= page
	}
	return max(0, min(pos, last))
}

// Nav are the navigation bindings Move answers.
var Nav = []keymap.Name{keymap.Up, keymap.Down, keymap.Top, keymap.Bottom, keymap.PageUp, keymap.PageDown}
