package fleet

import (
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// NextChange is the first moment after now at which the table would look different with
// nothing else changed: a visible row's age rolls over (minute and coarser ages at most
// ageSlot late), or a retry countdown on the health line moves. The program sleeps until then
// (an idle fleet of hour-old sandboxes wakes once a minute, not every second).
func (m *Model) NextChange(now time.Time) time.Time {
	var next time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, h := range m.health {
		if h.State == supervisor.StateConnected || h.State == supervisor.StateConnecting || h.NextRetry.IsZero() {
			continue
		}
		if d := h.NextRetry.Sub(now); d > 0 {
			// "retry in Ns" is d rounded to the second: it changes each time d crosses N-0.5 s,
			// and disappears at NextRetry.
			shown := d.Round(time.Second)
			earliest(h.NextRetry.Add(-max(shown-time.Second/2, 0)))
		}
	}
	last := min(m.store.Len(), m.offset+max(m.tableHeight(), 0))
	for i := m.offset; i < last; i++ {
		created := m.store.At(i).SB.Created
		at := sandbox.AgeChanges(now, created)
		if !created.IsZero() && now.Sub(created) >= time.Minute {
			at = coarseAgeSlot(at)
		}
		earliest(at)
	}
	return next
}

// ageSlot is how late a minute (or coarser) age may be redrawn. The rows of a fleet created
// over a few minutes roll over at as many different seconds; redrawing each one on time woke
// an idle workbench up to once per visible row a minute. Rounded up to a shared slot they
// wake it at most four times a minute; seconds under a minute stay exact.
const ageSlot = 15 * time.Second

// coarseAgeSlot is t rounded up to the next ageSlot boundary of the wall clock.
func coarseAgeSlot(t time.Time) time.Time {
	if s := t.Truncate(ageSlot); !s.Equal(t) {
		return s.Add(ageSlot)
	}
	return t
}

// viewKey is everything the table's text depends on besides the clock. A frame whose key equals
// the last one's, drawn before the last one's NextChange, is the last frame: View returns it
// without rebuilding it (idle frames cost a comparison).
type viewKey struct {
	store, health, input uint64 // generations: rows or index, health line, keys and marks
	width, height        int
	cursor, offset       int
	filtering, computing bool
	readOnly             bool
	text                 string // filter text, editor, error, status, theme, footer, activities
	keys                 any
}

type viewCache struct {
	key   viewKey
	until time.Time // the frame's first clock change (zero: never)
	at    time.Time
	frame string
	valid bool
}

func (m *Model) currentKey() viewKey {
	var b strings.Builder
	b.WriteString(m.input)
	b.WriteByte(0)
	if m.filtering {
		b.WriteString(m.edit.View(m.Theme))
	}
	b.WriteByte(0)
	b.WriteString(m.filterErr)
	b.WriteByte(0)
	b.WriteString(m.Status)
	b.WriteByte(0)
	b.WriteString(m.Theme.Name)
	b.WriteByte(0)
	if !m.filtering && m.Keys != nil { // the footer's bindings: an action layer arrived, a lock moved
		sel := m.Selection()
		for _, n := range Hints {
			if k, ok := m.Keys.Get(n); ok {
				b.WriteString(k.Disabled(sel))
				b.WriteByte(0)
			}
		}
	}
	m.keyVisible(&b, '=', m.Activity)
	// Hooks the program installs (team line, containment banner, row flags) are part of the frame.
	if m.Team != nil {
		b.WriteByte(0)
		b.WriteString(m.Team())
	}
	if m.Banner != nil {
		b.WriteByte(0)
		b.WriteString(m.Banner())
	}
	m.keyVisible(&b, '!', m.Flag)
	return viewKey{store: m.store.Gen(), health: m.healthGen, input: m.inputGen, width: m.width, height: m.height,
		cursor: m.cursor, offset: m.offset, filtering: m.filtering, computing: m.computing, readOnly: m.ReadOnly,
		text: b.String(), keys: m.Keys}
}

// keyVisible adds what mark says of each visible row (an activity, a flag) to a frame's key.
func (m *Model) keyVisible(b *strings.Builder, sep byte, mark func(sandboxID string) string) {
	if mark == nil {
		return
	}
	last := min(m.store.Len(), m.offset+max(m.tableHeight(), 0))
	for i := m.offset; i < last; i++ {
		id := m.store.At(i).SB.ID
		if v := mark(id); v != "" {
			b.WriteByte(0)
			b.WriteString(id)
			b.WriteByte(sep)
			b.WriteString(v)
		}
	}
}

// cachedView returns the last frame when nothing it depends on changed, else renders and keeps it.
func (m *Model) cachedView(render func() string) string {
	now := m.Now()
	key := m.currentKey()
	c := &m.view
	if c.valid && c.key == key && !now.Before(c.at) && (c.until.IsZero() || now.Before(c.until)) {
		return c.frame
	}
	*c = viewCache{key: key, at: now, until: m.NextChange(now), frame: render(), valid: true}
	return c.frame
}
