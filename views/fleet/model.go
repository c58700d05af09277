// Package fleet is the fleet screen: one live table of every sandbox across all backends, with a
// backend health line, a debounced filter computed off the UI goroutine, sorting, grouping,
// inline member expansion and multi-select. It renders only the visible rows.
package fleet

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/lineedit"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// FilterDebounce is how long typing must pause before a filter is computed.
const FilterDebounce = 60 * time.Millisecond

// UpdatesMsg carries a batch of supervisor updates into the UI. Made by Prepare, off the UI
// goroutine, it brings its resets' rows already built: at 25,000 sandboxes building them took
// 50–120 ms of the UI goroutine, a frozen key press while a large fleet loads.
type UpdatesMsg struct {
	Updates []supervisor.Update
	resets  []map[string]*Row // per update: its reset's rows by ID; nil when not prepared
}

// Prepare builds the rows of every reset in us. It is pure and safe to run on any goroutine; the
// message it returns is applied once, by one screen (its rows become that store's).
func Prepare(us []supervisor.Update) UpdatesMsg {
	msg := UpdatesMsg{Updates: us}
	for i, u := range us {
		if u.Event == nil || u.Event.Type != backends.EventReset {
			continue
		}
		if msg.resets == nil {
			msg.resets = make([]map[string]*Row, len(us))
		}
		msg.resets[i] = resetRows(u.Backend, u.Event.Sandboxes)
	}
	return msg
}

// HealthMsg replaces the health line.
type HealthMsg []supervisor.Health

type filterTickMsg struct{ gen int }

type computedMsg struct {
	gen int
	res Result
}

// Model is the fleet screen's state.
type Model struct {
	Keys  *keymap.Map
	Theme theme.Theme
	Now   func() time.Time

	store    *Store
	health   []supervisor.Health
	stale    map[string]string // backend → why its rows are stale
	cursorID string
	cursor   int
	offset   int
	width    int
	height   int

	filtering bool   // the filter input has focus
	input     string // filter text in force (what was typed)
	edit      lineedit.Model
	filterErr string
	gen       int // generation of the newest requested computation
	computing bool

	expanded map[string]bool
	marked   map[string]bool
	ReadOnly bool
	Status   string // one-line message under the table
	// Activity names the action running on a sandbox ("" when none); its row shows it in place
	// of the status while it runs.
	Activity func(sandboxID string) string
	// Team, when set, adds the team's line to the title (operators connected, who runs what).
	Team func() string
	// Flag is a one-letter mark for a sandbox's row ("!" open alert, "Q" quarantined; "" none)
	// and Banner the alert line shown in place of the health line ("" when there is none): the
	// containment watch's, installed by the program.
	Flag   func(sandboxID string) string
	Banner func() string

	paint  *rowPaints
	lines  *lineCache // the last frame's row lines (linecache.go)
	footer screen.FooterCache

	healthGen, inputGen uint64    // bumped when the health line or a key changes the view (clock.go)
	view                viewCache // the last frame and what it depended on
}

// New returns an empty fleet screen.
func New(km *keymap.Map, th theme.Theme) Model {
	return Model{Keys: km, Theme: th, Now: time.Now, store: NewStore(), stale: map[string]string{},
		expanded: map[string]bool{}, marked: map[string]bool{}}
}

// Store exposes the row store (read-only use by other views).
func (m *Model) Store() *Store { return m.store }

// SetSize sets the area the screen may draw in.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h; m.clamp() }

// Filtering reports whether the filter input has focus (the app then routes all keys here).
func (m *Model) Filtering() bool { return m.filtering }

// Selected is the row under the cursor, or nil.
func (m *Model) Selected() *Row {
	if m.cursor < 0 || m.cursor >= m.store.Len() {
		return nil
	}
	return m.store.At(m.cursor)
}

// Marked returns the multi-selected sandbox IDs (or the cursor's, when none are marked).
func (m *Model) Marked() []string {
	var ids []string
	for id := range m.marked {
		if _, ok := m.store.Get(id); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		if r := m.Selected(); r != nil {
			ids = append(ids, r.SB.ID)
		}
	}
	return ids
}

// ClearMarks empties the multi-selection.
func (m *Model) ClearMarks() { m.marked = map[string]bool{}; m.inputGen++ }

// StaleReason says why a backend's rows are greyed ("" when live).
func (m *Model) StaleReason(backend string) string { return m.stale[backend] }

// Health returns the last health line.
func (m *Model) Health() []supervisor.Health { return m.health }

// ApplyUpdates folds supervisor updates into the store; it returns a command when a large reset
// needs an off-goroutine recompute.
func (m *Model) ApplyUpdates(us []supervisor.Update) tea.Cmd {
	return m.applyUpdates(UpdatesMsg{Updates: us})
}

func (m *Model) applyUpdates(msg UpdatesMsg) tea.Cmd {
	need := false
	for i, u := range msg.Updates {
		if u.Health != nil {
			m.setHealth(*u.Health)
		}
		if u.Event != nil {
			var rows map[string]*Row
			if msg.resets != nil {
				rows = msg.resets[i]
			}
			if m.store.apply(u.Backend, *u.Event, rows) {
				need = true
			}
		}
	}
	m.followCursor()
	if need {
		return m.compute(m.store.Query(), m.store.Order())
	}
	return nil
}

// SetHealthAll replaces the whole health line (at start, before any update).
func (m *Model) SetHealthAll(hs []supervisor.Health) {
	for _, h := range hs {
		m.setHealth(h)
	}
}

func (m *Model) setHealth(h supervisor.Health) {
	m.healthGen++
	found := false
	for i := range m.health {
		if m.health[i].Backend == h.Backend {
			m.health[i] = h
			found = true
		}
	}
	if !found {
		m.health = append(m.health, h)
	}
	switch h.State {
	case supervisor.StateConnected:
		if _, was := m.stale[h.Backend]; was {
			delete(m.stale, h.Backend)
			m.store.MarkBackend(h.Backend, false)
		}
	default:
		why := string(h.State)
		if h.LastError != "" {
			why += ": " + h.LastError
		}
		m.stale[h.Backend] = why
		m.store.MarkBackend(h.Backend, true)
	}
}

// LoadCached paints the last known fleet of a backend before it answers; rows stay greyed until
// the backend's first reset.
// A backend that answered already keeps its live rows (the cache may arrive after it).
func (m *Model) LoadCached(backend string, rows []*Row) {
	for _, h := range m.health {
		if h.Backend == backend && h.State == supervisor.StateConnected {
			return
		}
	}
	m.store.PutAll(rows)
	if _, ok := m.stale[backend]; !ok {
		m.stale[backend] = "cached: waiting for the backend"
	}
	m.followCursor()
}

func (m *Model) compute(q Query, o Order) tea.Cmd {
	m.gen++
	gen := m.gen
	snap := m.store.Snapshot(q, o)
	m.computing = true
	return func() tea.Msg { return computedMsg{gen: gen, res: Compute(snap)} }
}

// Update handles keys and the screen's own messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case UpdatesMsg:
		cmd := m.applyUpdates(msg)
		return m, cmd
	case HealthMsg:
		m.SetHealthAll(msg)
		return m, nil
	case filterTickMsg:
		if msg.gen != m.gen {
			return m, nil // superseded by a later keystroke
		}
		q, err := ParseQuery(m.input)
		if err != nil {
			m.filterErr = err.Error()
			return m, nil
		}
		m.filterErr = ""
		return m, m.compute(q, m.store.Order())
	case computedMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		m.computing = false
		m.store.Install(msg.res)
		m.followCursor()
		return m, nil
	case tea.KeyPressMsg:
		m.inputGen++
		if m.filtering {
			return m.updateFilter(msg)
		}
		return m.updateKeys(msg)
	case tea.PasteMsg:
		m.inputGen++
		if m.filtering {
			return m.updateFilter(msg)
		}
	}
	return m, nil
}

func (m Model) updateFilter(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case m.Keys.IsControl(k, keymap.Open):
			m.filtering = false
			return m, m.applyNow()
		case m.Keys.IsControl(k, keymap.Back):
			m.filtering = false
			m.input = ""
			m.filterErr = ""
			return m, m.debounce()
		}
	}
	m.edit.Update(msg)
	if v := m.edit.Value(); v != m.input {
		m.input = v
		return m, m.debounce()
	}
	return m, nil
}

func (m *Model) debounce() tea.Cmd {
	m.gen++
	gen := m.gen
	return tea.Tick(FilterDebounce, func(time.Time) tea.Msg { return filterTickMsg{gen: gen} })
}

// SyncFilterLimit is the largest fleet whose filter Enter computes on the UI goroutine (a few
// ms at 10,000 rows), so the table on screen is the filtered one at the very next frame; past
// it the computation runs in a command as while typing.
const SyncFilterLimit = 20_000

// applyNow puts the typed filter in force at once (Enter), superseding a pending debounce.
func (m *Model) applyNow() tea.Cmd {
	if m.store.Total() > SyncFilterLimit {
		return m.SetFilter(m.input)
	}
	q, err := ParseQuery(m.input)
	if err != nil {
		m.filterErr = err.Error()
		return nil
	}
	m.filterErr = ""
	m.gen++ // a debounce tick or computation still in flight is now stale
	m.computing = false
	m.store.Install(Compute(m.store.Snapshot(q, m.store.Order())))
	m.followCursor()
	return nil
}

// SetFilter applies a filter immediately (command mode, tests).
func (m *Model) SetFilter(text string) tea.Cmd {
	m.input = text
	q, err := ParseQuery(text)
	if err != nil {
		m.filterErr = err.Error()
		return nil
	}
	m.filterErr = ""
	return m.compute(q, m.store.Order())
}

func (m Model) updateKeys(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.Keys
	page := max(1, m.tableHeight()-1)
	switch {
	case k.Is(msg, keymap.Filter):
		m.filtering = true
		m.edit = lineedit.New(m.input)
		return m, nil
	case k.Is(msg, keymap.Back):
		if m.input != "" {
			m.input = ""
			return m, m.SetFilter("")
		}
	case k.Is(msg, keymap.Up):
		m.move(-1)
	case k.Is(msg, keymap.Down):
		m.move(1)
	case k.Is(msg, keymap.PageUp):
		m.move(-page)
	case k.Is(msg, keymap.PageDown):
		m.move(page)
	case k.Is(msg, keymap.Top):
		m.move(-m.store.Len())
	case k.Is(msg, keymap.Bottom):
		m.move(m.store.Len())
	case k.Is(msg, keymap.Expand):
		if r := m.Selected(); r != nil {
			m.expanded[r.SB.ID] = !m.expanded[r.SB.ID]
			m.clamp()
		}
	case k.Is(msg, keymap.Select):
		if r := m.Selected(); r != nil {
			if m.marked[r.SB.ID] {
				delete(m.marked, r.SB.ID)
			} else {
				m.marked[r.SB.ID] = true
			}
			m.move(1)
		}
	case k.Is(msg, keymap.Sort):
		o := m.store.Order()
		o.Col = (o.Col + 1) % numColumns
		return m, m.compute(m.store.Query(), o)
	case k.Is(msg, keymap.Reverse):
		o := m.store.Order()
		o.Desc = !o.Desc
		return m, m.compute(m.store.Query(), o)
	case k.Is(msg, keymap.Group):
		o := m.store.Order()
		o.Group = (o.Group + 1) % numGroupings
		return m, m.compute(m.store.Query(), o)
	}
	return m, nil
}

// SetOrder changes sort or grouping (command mode).
func (m *Model) SetOrder(o Order) tea.Cmd { return m.compute(m.store.Query(), o) }

func (m *Model) move(d int) {
	n := m.store.Len()
	if n == 0 {
		m.cursor, m.cursorID = 0, ""
		return
	}
	m.cursor = min(max(m.cursor+d, 0), n-1)
	m.cursorID = m.store.At(m.cursor).SB.ID
	m.clamp()
}

// followCursor keeps the cursor on the same sandbox after the index changed under it.
func (m *Model) followCursor() {
	if m.cursorID != "" {
		if i := m.store.IndexOf(m.cursorID); i >= 0 {
			m.cursor = i
			m.clamp()
			return
		}
	}
	n := m.store.Len()
	if n == 0 {
		m.cursor, m.cursorID = 0, ""
		return
	}
	m.cursor = min(max(m.cursor, 0), n-1)
	m.cursorID = m.store.At(m.cursor).SB.ID
	m.clamp()
}

// Select moves the cursor to a sandbox ID if it is shown.
func (m *Model) Select(id string) bool {
	if i := m.store.IndexOf(id); i >= 0 {
		m.cursor, m.cursorID = i, id
		m.clamp()
		return true
	}
	return false
}

// clamp keeps the cursor's lines inside the visible window, walking at most one screen of rows.
func (m *Model) clamp() {
	h := m.tableHeight()
	if h <= 0 {
		return
	}
	if m.cursor < m.offset {
		m.offset = m.cursor
		return
	}
	// Walk from offset to cursor, counting lines (rows, expanded members, group headers).
	for m.offset < m.cursor && m.linesBetween(m.offset, m.cursor) > h {
		m.offset++
	}
}

// linesBetween counts display lines from row a through row b inclusive, stopping early past the
// screen height so the cost is bounded by the screen, not the fleet.
func (m *Model) linesBetween(a, b int) int {
	lines, limit := 0, m.tableHeight()+1
	groups := m.store.Groups()
	for i := a; i <= b && lines <= limit; i++ {
		if isGroupStart(groups, i) {
			lines++
		}
		lines++
		if i != b && m.expanded[m.store.At(i).SB.ID] {
			lines += len(m.store.At(i).SB.Members)
		}
	}
	if m.expanded[m.store.At(b).SB.ID] {
		lines += len(m.store.At(b).SB.Members)
	}
	return lines
}

func isGroupStart(gs []groupStart, i int) bool {
	lo, hi := 0, len(gs)
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case gs[mid].at == i:
			return true
		case gs[mid].at < i:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}

func groupAt(gs []groupStart, i int) (groupStart, bool) {
	lo, hi := 0, len(gs)
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case gs[mid].at == i:
			return gs[mid], true
		case gs[mid].at < i:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return groupStart{}, false
}

// tableHeight is the number of lines available for rows (screen minus title, health, header,
// footer and status lines).
func (m *Model) tableHeight() int { return m.height - 5 }

// FilterText is the filter as typed.
func (m *Model) FilterText() string { return m.input }

func trimErr(s string) string { return strings.ReplaceAll(s, "\n", " ") }
