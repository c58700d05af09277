package logs

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/backends/logring"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// memberColours tell members apart (ANSI 16 colours, readable on dark and light backgrounds);
// colourless themes use none.
var memberColours = []string{"6", "3", "5", "2", "4", "1"}

// View renders the title, the lines in view, the status or search line and the footer.
func (m *Model) View(c *screen.Context) string {
	th, w, h := c.Theme, c.Width, c.Height
	m.height = max(h-3, 1)
	lines := []string{th.Title.Render(ansi.Truncate(m.title(), w, "~"))}
	lines = append(lines, m.rows(c, w, m.height)...)
	switch {
	case m.searching:
		lines = append(lines, "/"+m.input.View(th))
	case m.err != "":
		lines = append(lines, th.Err.Render(ansi.Truncate("logs: "+oneLine(m.err), w, "~")))
	default:
		lines = append(lines, c.StatusLine())
	}
	km := c.Keys
	foot := screen.Hints(km.Labels(keymap.Down, keymap.Up)+" scroll", c.Hint(keymap.Filter, "search"),
		km.Labels(keymap.SearchNext, keymap.SearchPrev)+" next/prev", c.Hint(keymap.LogFollow), c.Hint(keymap.LogPause),
		c.Hint(keymap.LogStamps), c.Hint(keymap.LogWrap), c.Hint(keymap.Bottom, "end"), c.Hint(keymap.Back))
	lines = append(lines, th.Dim.Render(ansi.Truncate(foot, w, "~")))
	return screen.Fit(lines, w, h)
}

func (m *Model) title() string {
	t := m.opts.Title
	if t == "" {
		t = "logs"
	}
	parts := []string{t, fmt.Sprintf("%d lines (ring %d)", m.ring.Len(), m.ring.Cap())}
	if d := m.ring.Dropped() + m.dropped; d > 0 {
		parts = append(parts, fmt.Sprintf("%d older dropped", d))
	}
	switch {
	case m.paused:
		parts = append(parts, "PAUSED")
	case m.ended:
		parts = append(parts, "ended")
	case m.follow:
		parts = append(parts, "following")
	default:
		parts = append(parts, "scrolled")
	}
	if m.wrap {
		parts = append(parts, "wrap")
	}
	if m.query != "" {
		parts = append(parts, "/"+m.query)
	}
	return strings.Join(parts, " · ")
}

// rows renders h rows of log text: the newest when following, else from topSeq.
func (m *Model) rows(c *screen.Context, w, h int) []string {
	n := m.ring.Len()
	if n == 0 {
		msg := "waiting for lines…"
		if m.ended {
			msg = "no lines"
		}
		return []string{c.Theme.Dim.Render(msg)}
	}
	var out []string
	if m.follow {
		for i := n - 1; i >= 0 && len(out) < h; i-- {
			r := m.render(c, m.ring.At(i), w)
			out = append(r[max(len(r)-(h-len(out)), 0):], out...)
		}
		return out
	}
	for i := m.index(m.topSeq); i < n && len(out) < h; i++ {
		out = append(out, m.render(c, m.ring.At(i), w)...)
	}
	if len(out) > h {
		out = out[:h]
	}
	return out
}

// render draws one line as one row (cut) or several (wrapped).
func (m *Model) render(c *screen.Context, l logring.Line, w int) []string {
	var prefix strings.Builder
	if m.stamps {
		prefix.WriteString(time.Unix(0, l.Time).Format("15:04:05.000") + " ")
	}
	if l.Member != "" {
		m.memberWidth = max(m.memberWidth, ansi.StringWidth(l.Member))
		prefix.WriteString(m.memberStyle(c, l.Member).Render(l.Member))
		prefix.WriteString(strings.Repeat(" ", m.memberWidth-ansi.StringWidth(l.Member)))
		if l.Stream == "stderr" {
			prefix.WriteString(c.Theme.Warn.Render("!"))
		} else {
			prefix.WriteString(" ")
		}
		prefix.WriteString("│ ")
	}
	text := clean(l.Text)
	selected := m.matched && l.Seq == m.matchSeq
	if !m.wrap {
		row := prefix.String() + text
		if selected {
			row = prefix.String() + c.Theme.Selected.Render(ansi.Truncate(text, max(w-ansi.StringWidth(prefix.String()), 1), ""))
		}
		return []string{ansi.Truncate(row, w, "~")}
	}
	pw := ansi.StringWidth(prefix.String())
	body := ansi.Hardwrap(text, max(w-pw, 8), true)
	parts := strings.Split(body, "\n")
	out := make([]string, len(parts))
	for i, p := range parts {
		if selected {
			p = c.Theme.Selected.Render(p)
		}
		if i == 0 {
			out[i] = prefix.String() + p
		} else {
			out[i] = strings.Repeat(" ", pw) + p
		}
	}
	return out
}

func (m *Model) memberStyle(c *screen.Context, member string) lipgloss.Style {
	if c.Theme.Name == "none" {
		return lipgloss.NewStyle()
	}
	i, ok := m.colours[member]
	if !ok {
		i = len(m.colours) % len(memberColours)
		m.colours[member] = i
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color(memberColours[i]))
}

// clean makes a line of untrusted output safe to draw: terminal escape sequences a member
// printed are removed (they could move the cursor or retitle the operator's terminal), tabs
// become spaces and other control characters a visible "?".
func clean(s string) string {
	simple := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			simple = false
			break
		}
	}
	if simple {
		return s
	}
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '?'
		}
		return r
	}, s)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
