package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
	"github.com/rangekeeper/rangekeeper/views/fleet"
)

// helpView is the `?` cheatsheet, generated from the same keymap as the footer.
// disabled, when not nil, gives the reason a binding cannot act on the selected sandbox; such
// bindings stay listed, dimmed, with the reason.
func helpView(th theme.Theme, km *keymap.Map, w, h int, readOnly bool, bgSource string, disabled func(name string) string) string {
	var lines []string
	title := "rangekeeper keys"
	if readOnly {
		title += "  (read-only: dangerous actions are not bound)"
	}
	lines = append(lines, th.Title.Render(title), "")
	groups := km.Groups()
	colW := max(30, (w-2)/2)
	var col []string
	for _, g := range groups {
		col = append(col, th.Header.Render(g.Group))
		for _, b := range g.Bindings {
			k := th.Key
			suffix := ""
			if b.Dangerous {
				k = th.KeyDanger
				suffix = " (confirm)"
			}
			if disabled != nil {
				if why := disabled(b.Name); why != "" {
					col = append(col, th.Disabled.Render(fmt.Sprintf("  %-13s %s", strings.Join(b.Keys, "/"), why))) // the reason names the action
					continue
				}
			}
			col = append(col, fmt.Sprintf("  %s %s%s", k.Render(fmt.Sprintf("%-13s", strings.Join(b.Keys, "/"))), b.Help, suffix))
		}
		col = append(col, "")
	}
	// Two columns when the screen is wide enough, else one scrolled list.
	rows := h - 4
	if w >= 2*colW && len(col) > rows {
		left, right := col[:min(rows, len(col))], col[min(rows, len(col)):]
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
	lines = append(lines, th.Dim.Render("esc/? close  theme "+th.Name+"  bg: "+bgSource))
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

// tooSmall is shown below the minimum size instead of a broken layout.
func tooSmall(th theme.Theme, w, h int) string {
	msg := fmt.Sprintf("terminal too small: %dx%d (need %dx%d)", w, h, fleet.MinWidth, fleet.MinHeight)
	return th.Err.Render(ansi.Truncate(msg, w, "~")) + "\n" + ansi.Truncate("resize, or press q to quit", w, "~")
}
