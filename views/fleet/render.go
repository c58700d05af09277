package fleet

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// MinWidth and MinHeight are the smallest usable terminal; below it the app shows a notice.
const (
	MinWidth  = 60
	MinHeight = 12
)

// layout holds column widths for one terminal width; eval and sample are 0 when not shown.
type layout struct{ backend, name, task, eval, sample, status, members, age, sev int }

// The link columns' widths, and the narrowest sandbox name each layout keeps: EVAL and SAMPLE
// give way first, EVAL before SAMPLE, so the name never shrinks below what it had without them.
const (
	evalNarrow, evalWide     = 10, 14
	sampleNarrow, sampleWide = 10, 14
	nameWithLinks            = 16
	nameWithSample           = 14
)

// layoutFor lays out width w; links says whether any row is linked to an Inspect sample (no
// link columns otherwise: a range without Inspect keeps its table as it was).
func layoutFor(w int, links bool) layout {
	l := layout{backend: 8, task: 13, status: 8, members: 7, age: 5, sev: 8}
	ew, sw := evalNarrow, sampleNarrow
	if w >= 110 {
		l.task = 22
		l.backend = 14
		ew, sw = evalWide, sampleWide
	}
	fixed := 2 + l.backend + l.task + l.status + l.members + l.age + l.sev + 6
	if links {
		// With EVAL shown, TASK (the backend's hint, usually the same task) gives up its
		// wide room first.
		slim := fixed - l.task + min(l.task, 13)
		switch rest := w - fixed; {
		case w-slim-(ew+1)-(sw+1) >= nameWithLinks:
			l.task = min(l.task, 13)
			l.eval, l.sample = ew, sw
			fixed = slim + ew + sw + 2
		case rest-(sw+1) >= nameWithSample:
			l.sample = sw
			fixed += sw + 1
		}
	}
	l.name = max(w-fixed, 8)
	return l
}

// cell pads or cuts s to exactly w columns (ANSI-aware, so wide runes never break alignment).
func cell(s string, w int) string {
	n := width(s)
	if n > w {
		return ansi.Truncate(s, w, "~")
	}
	return s + spaces(w-n)
}

// width is ansi.StringWidth with a fast path for plain ASCII, which is almost every cell.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x7f || c < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

const blank = "                                                                                                                                "

func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(blank) {
		return blank[:n]
	}
	return strings.Repeat(" ", n)
}

// Hints are the bindings the fleet's footer shows, in order.
var Hints = []keymap.Name{keymap.Open, keymap.Filter, keymap.Command, keymap.Snapshot, keymap.Revert, keymap.Teardown,
	keymap.Probe, keymap.Help, keymap.Quit}

// View renders the screen at its size. Its cost depends on the screen size, not the fleet size,
// and an unchanged frame (same rows, health, size, cursor, input, before the next age change)
// is not rebuilt at all (clock.go).
func (m *Model) View() string { return m.cachedView(m.render) }

func (m *Model) render() string {
	w, h := m.width, m.height
	var b strings.Builder
	b.Grow(w * h * 2)
	b.WriteString(m.titleLine(w))
	b.WriteByte('\n')
	b.WriteString(m.healthLine(w))
	b.WriteByte('\n')
	l := layoutFor(w, m.store.anyLinks)
	b.WriteString(m.Theme.Header.Render(cell(m.headerText(l), w)))
	b.WriteByte('\n')
	lines := m.tableLines(l, w, m.tableHeight())
	for _, line := range lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	for i := len(lines); i < m.tableHeight(); i++ {
		b.WriteByte('\n')
	}
	b.WriteString(m.statusLine(w))
	b.WriteByte('\n')
	b.WriteString(m.footerLine(w))
	return b.String()
}

func (m *Model) titleLine(w int) string {
	o := m.store.Order()
	dir := "asc"
	if o.Desc {
		dir = "desc"
	}
	left := m.Theme.Title.Render("rangekeeper")
	info := fmt.Sprintf("  %d/%d sandboxes  sort:%s %s", m.store.Len(), m.store.Total(), strings.ToLower(o.Col.String()), dir)
	if o.Group != GroupNone {
		info += "  group:" + o.Group.String()
	}
	if m.input != "" && !m.filtering {
		info += "  filter:" + m.input
	}
	if len(m.marked) > 0 {
		info += fmt.Sprintf("  marked:%d", len(m.marked))
	}
	if m.computing {
		info += "  (sorting...)"
	}
	if m.Team != nil {
		if t := m.Team(); t != "" {
			info += "  " + t
		}
	}
	right := ""
	if m.ReadOnly {
		right = m.Theme.Banner.Render(" READ-ONLY ")
	}
	space := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	return left + m.Theme.Dim.Render(cell(info, max(space, 0))) + right
}

func (m *Model) healthLine(w int) string {
	if m.Banner != nil { // the containment watch's alert line takes the health line's place
		if b := m.Banner(); b != "" {
			return m.Theme.Err.Render(ansi.Truncate(b, w, "~"))
		}
	}
	if len(m.health) == 0 {
		return m.Theme.Dim.Render(cell("no backends configured", w))
	}
	var parts []string
	for _, h := range m.health {
		switch h.State {
		case supervisor.StateConnected:
			parts = append(parts, m.Theme.OK.Render("[ok] ")+h.Backend)
		case supervisor.StateConnecting:
			parts = append(parts, m.Theme.Warn.Render("[..] ")+h.Backend+" connecting")
		default:
			msg := h.Backend + " reconnecting"
			if h.LastError != "" {
				msg += ": " + trimErr(h.LastError)
			}
			if !h.NextRetry.IsZero() {
				if d := h.NextRetry.Sub(m.Now()); d > 0 {
					msg += fmt.Sprintf(" (retry in %s)", d.Round(time.Second))
				}
			}
			parts = append(parts, m.Theme.Err.Render("[!!] ")+msg)
		}
	}
	return ansi.Truncate(strings.Join(parts, "  "), w, "~")
}

func (m *Model) headerText(l layout) string {
	o := m.store.Order()
	name := func(c Column, w int) string {
		s := c.String()
		if o.Col == c {
			if o.Desc {
				s += "v"
			} else {
				s += "^"
			}
		}
		return cell(s, w)
	}
	cols := make([]string, 0, numColumns)
	cols = append(cols, name(ColBackend, l.backend), name(ColName, l.name), name(ColTask, l.task))
	if l.eval > 0 {
		cols = append(cols, name(ColEval, l.eval))
	}
	if l.sample > 0 {
		cols = append(cols, name(ColSample, l.sample))
	}
	cols = append(cols, name(ColStatus, l.status), name(ColMembers, l.members), name(ColAge, l.age), name(ColSev, l.sev))
	return "  " + strings.Join(cols, " ")
}

// tableLines renders at most n lines starting at the scroll offset.
func (m *Model) tableLines(l layout, w, n int) []string {
	if n <= 0 {
		return nil
	}
	if m.store.Total() == 0 {
		return []string{m.Theme.Dim.Render(cell("  no sandboxes yet: waiting for backends"+m.keyHint(keymap.Help, "press %s for help"), w))}
	}
	if m.store.Len() == 0 {
		return []string{m.Theme.Dim.Render(cell("  nothing matches the filter"+m.keyHint(keymap.Back, "%s clears it"), w))}
	}
	out := make([]string, 0, n)
	if m.lines == nil {
		m.lines = &lineCache{}
	}
	m.lines.frame()
	groups := m.store.Groups()
	now := m.Now()
	for i := m.offset; i < m.store.Len() && len(out) < n; i++ {
		if g, ok := groupAt(groups, i); ok {
			out = append(out, m.Theme.Title.Render(cell(fmt.Sprintf("- %s (%d)", g.key, g.count), w)))
			if len(out) == n {
				break
			}
		}
		r := m.store.At(i)
		out = append(out, m.rowLine(r, i == m.cursor, l, w, now))
		if m.expanded[r.SB.ID] {
			dim := m.paints().dim
			for _, mem := range r.SB.Members {
				if len(out) == n {
					break
				}
				line := fmt.Sprintf("      - %s  %s  %s  %s", mem.Service, mem.Name, mem.State, mem.Image)
				out = append(out, dim.S(cell(line, w)))
			}
		}
	}
	return out
}

func (m *Model) rowLine(r *Row, selected bool, l layout, w int, now time.Time) string {
	k := lineKey{row: r, selected: selected, marked: m.marked[r.SB.ID], expanded: m.expanded[r.SB.ID],
		age: sandbox.Age(now, r.SB.Created), theme: m.Theme.Name, width: w}
	if m.Flag != nil {
		k.flag = m.Flag(r.SB.ID)
	}
	if m.Activity != nil {
		k.activity = m.Activity(r.SB.ID)
	}
	if s, ok := m.lines.get(k); ok {
		return s
	}
	s := m.buildRowLine(k, l)
	m.lines.put(k, s)
	return s
}

// buildRowLine renders the line lineKey k describes.
func (m *Model) buildRowLine(k lineKey, l layout) string {
	r, w := k.row, k.width
	mark := "  "
	if k.marked {
		mark = "* "
	}
	if k.flag != "" && !k.marked { // the containment watch: ! alert, Q quarantined
		mark = k.flag[:1] + mark[1:]
	}
	if k.expanded {
		mark = mark[:1] + "-"
	} else if len(r.SB.Members) > 0 {
		mark = mark[:1] + "+"
	}
	running := 0
	for _, mem := range r.SB.Members {
		if mem.Running {
			running++
		}
	}
	backend := string(r.SB.Backend)
	if l.backend > 8 {
		backend = r.Backend
	}
	name := r.SB.Name
	if r.SB.Simulated { // marked in the backend column, which always has room for it
		backend = string(r.SB.Backend) + "(sim)"
		if l.backend > 8 {
			backend = r.Backend + " SIMULATED"
		}
	}
	sev := "-"
	if r.Sev > catalog.SeverityNone {
		sev = r.Sev.String()
	}
	if r.SB.PosturePending != "" {
		sev += "…" // findings still arriving: at least this severe
	}
	status := string(r.SB.Status)
	if k.activity != "" {
		status = k.activity // the action name fits the column: snapshot, revert, teardown, probe
	}
	cols := make([]string, 0, 8)
	cols = append(cols, cell(backend, l.backend), cell(name, l.name), cell(r.SB.Task, l.task))
	cols = appendLinkCells(cols, r, l)
	at := len(cols)
	cols = append(cols, cell(status, l.status), cell(fmt.Sprintf("%d/%d", running, len(r.SB.Members)), l.members), cell(k.age, l.age))
	if width(status) > l.status {
		// Who runs it, in team mode ("reverting · alice"): the activity takes the members and
		// age cells too while it runs, so it is read whole and the columns stay where they are.
		cols = append(cols[:at], cell(status, l.status+1+l.members+1+l.age))
	}
	text := mark + strings.Join(cols, " ") + " "
	p := m.paints()
	switch {
	case k.selected:
		return p.selected.S(cell(text+sev, w))
	case r.Stale:
		return p.stale.S(cell(text+sev, w))
	}
	st := p.row
	if k.marked {
		st = p.marked
	}
	return st.S(text) + p.sev[r.Sev].S(cell(sev, l.sev)) + spaces(w-width(text)-l.sev)
}

// rowPaints caches the theme's row styles as escape sequences (rebuilt when the theme changes).
type rowPaints struct {
	theme                             string
	selected, stale, row, marked, dim theme.Paint
	sev                               map[catalog.Severity]theme.Paint
}

func (m *Model) paints() *rowPaints {
	if m.paint != nil && m.paint.theme == m.Theme.Name {
		return m.paint
	}
	p := &rowPaints{theme: m.Theme.Name, selected: theme.NewPaint(m.Theme.Selected), stale: theme.NewPaint(m.Theme.Stale),
		row: theme.NewPaint(m.Theme.Row), marked: theme.NewPaint(m.Theme.Marked), dim: theme.NewPaint(m.Theme.Dim), sev: map[catalog.Severity]theme.Paint{}}
	for s := catalog.SeverityNone; s <= catalog.SeverityCritical; s++ {
		p.sev[s] = theme.NewPaint(m.Theme.Severity(s))
	}
	m.paint = p
	return p
}

func (m *Model) statusLine(w int) string {
	switch {
	case m.filterErr != "":
		return m.Theme.Err.Render(cell(m.filterErr, w))
	case m.Status != "":
		return m.Theme.Warn.Render(cell(m.Status, w))
	}
	if r := m.Selected(); r != nil && r.Stale {
		return m.Theme.Err.Render(cell(r.Backend+" unreachable, rows greyed: "+trimErr(m.stale[r.Backend]), w))
	}
	if r := m.Selected(); r != nil {
		return m.Theme.Dim.Render(cell(r.SB.ID+linkNote(r.Eval), w))
	}
	return strings.Repeat(" ", w)
}

func (m *Model) footerLine(w int) string {
	if m.filtering {
		return m.Theme.Key.Render(m.Keys.Label(keymap.Filter)) + cell(m.edit.View(m.Theme), w-1)
	}
	c := screen.Context{Keys: m.Keys, Theme: m.Theme, Width: w}
	return c.CachedFooter(&m.footer, m.Selection(), Hints...)
}

// keyHint is " (<prose with the key>)" from the keymap; "" when the binding does not exist.
func (m *Model) keyHint(n keymap.Name, prose string) string {
	if l := m.Keys.Label(n); l != "" {
		return " (" + fmt.Sprintf(prose, l) + ")"
	}
	return ""
}

// Selection is the row under the cursor, and the marked rows for bulk bindings.
func (m *Model) Selection() keymap.Selection {
	var sel keymap.Selection
	if r := m.Selected(); r != nil {
		sel.Sandbox = r.SB.ID
	}
	for id := range m.marked {
		if _, ok := m.store.Get(id); ok {
			sel.Marked = append(sel.Marked, id)
		}
	}
	sort.Strings(sel.Marked)
	return sel
}
