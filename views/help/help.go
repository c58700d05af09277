// Package help is the `?` cheatsheet, generated from the same keymap as every footer: remapped
// keys show as remapped, bindings that do not exist (read-only mode, a role) are not listed, and
// bindings that cannot act on the selection are dimmed with their reason.
package help

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Model is the cheatsheet of the screen it was opened over: the bindings live there, with the
// reasons they cannot act on its selection.
type Model struct {
	sel      keymap.Selection
	live     map[keymap.Name]bool
	bgSource func() string // how the dark/light guess was made (it may change while open)
}

// New opens the help for the bindings live on a screen and its selection.
func New(live []keymap.Name, sel keymap.Selection, bgSource func() string) *Model {
	m := &Model{sel: sel, live: map[keymap.Name]bool{}, bgSource: bgSource}
	for _, n := range live {
		m.live[n] = true
	}
	return m
}

// Bindings: the help key closes it again (back and quit are the program's).
func (m *Model) Bindings() []keymap.Name { return []keymap.Name{keymap.Help} }

// Update closes on the help key.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && c.Keys.Is(k, keymap.Help) {
		c.Pop()
	}
	return nil
}

// View renders the bindings by group, in two columns when the screen is wide enough.
func (m *Model) View(c *screen.Context) string {
	th, w, h := c.Theme, c.Width, c.Height
	var lines []string
	title := "rangekeeper keys"
	if c.ReadOnly {
		title += "  (read-only: dangerous actions are not bound)"
	}
	lines = append(lines, th.Title.Render(title), "")
	colW := max(30, (w-2)/2)
	var col []string
	for _, g := range c.Keys.Groups() {
		var bs []keymap.Binding
		for _, b := range g.Bindings {
			if m.live[b.Name] {
				bs = append(bs, b)
			}
		}
		if len(bs) == 0 {
			continue
		}
		col = append(col, th.Header.Render(g.Group))
		for _, b := range bs {
			k := th.Key
			suffix := ""
			if b.Dangerous {
				k = th.KeyDanger
				suffix = " (confirm)"
			}
			if why := b.Disabled(m.sel); why != "" {
				col = append(col, th.Disabled.Render(fmt.Sprintf("  %-13s %s", strings.Join(b.Keys, "/"), why))) // the reason names the action
				continue
			}
			col = append(col, fmt.Sprintf("  %s %s%s", k.Render(fmt.Sprintf("%-13s", strings.Join(b.Keys, "/"))), b.Help, suffix))
		}
		col = append(col, "")
	}
	rows := h - 4
	if w >= 2*colW && len(col) > rows {
		left, right := col[:min(rows, len(col))], col[min(rows, len(col)):]
		need := 0 // the left column as wide as its longest line needs, so reasons are not cut
		for _, l := range left {
			need = max(need, ansi.StringWidth(l)+2)
		}
		colW = max(colW, min(need, w-30))
		for i := 0; i < rows; i++ {
			l, r := "", ""
			if i < len(left) {
				l = left[i]
			}
			if i < len(right) {
				r = right[i]
			}
			lines = append(lines, padANSI(l, colW)+r)
		}
	} else {
		lines = append(lines, col...)
	}
	if len(lines) > h-1 {
		lines = lines[:h-1]
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, th.Dim.Render(c.Keys.Labels(keymap.Back, keymap.Help)+" close  theme "+th.Name+"  bg: "+m.bgSource()))
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "~")
	}
	return strings.Join(lines, "\n")
}

func padANSI(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return ansi.Truncate(s, w, "~")
}
