// Package logs is the log screen: a member's or a whole sandbox's output followed live into a
// bounded ring (backends/logring), members interleaved and coloured apart, with timestamps and
// wrapping on demand, search (`/`, next, previous), pause and jump to the end. Lines arrive
// through a command (a subscription on a feed pumped off the UI goroutine), never in Update.
package logs

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends/logring"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/lineedit"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Options describe what the screen shows.
type Options struct {
	Sandbox string // the sandbox's ID (the screen's subject)
	Title   string // e.g. "logs inspect-x-i1234567 (every member)"
	Lines   int    // ring size; 0: logring.DefaultSize
	Source  Source
}

// Model is the screen.
type Model struct {
	opts   Options
	ring   *logring.Ring
	feed   *feed
	ctx    context.Context
	cancel context.CancelFunc

	follow bool   // keep the newest line in view
	paused bool   // stop taking lines (they wait, bounded, in the feed)
	stamps bool   // show each line's time
	wrap   bool   // wrap long lines instead of cutting them
	topSeq uint64 // the first line in view when not following (a ring sequence number)

	searching bool
	input     lineedit.Model
	query     string
	matchSeq  uint64
	matched   bool

	dropped     uint64 // lines the feed dropped before they reached the ring (paused too long)
	ended       bool
	err         string
	colours     map[string]int
	memberWidth int // the widest member name drawn so far (prefixes line up)
	height      int // rows of log text at the last render (for paging)
}

// New builds the screen; Open starts the stream.
func New(opts Options) *Model {
	return &Model{opts: opts, ring: logring.New(opts.Lines), follow: true, colours: map[string]int{}}
}

var _ interface {
	screen.Screen
	screen.Opener
	screen.Closer
	screen.Typing
	screen.Selector
} = (*Model)(nil)

// Open starts reading the stream off the UI goroutine.
func (m *Model) Open(*screen.Context) tea.Cmd {
	if m.opts.Source == nil {
		m.err = "logs are not available here"
		return nil
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.feed = newFeed(m.ring.Cap())
	return m.feed.run(m.ctx, m.opts.Source)
}

// Close ends the stream.
func (m *Model) Close() {
	if m.cancel != nil {
		m.cancel()
	}
}

// Subject is the sandbox the logs are of.
func (m *Model) Subject() string { return m.opts.Sandbox }

// Selection is the sandbox shown.
func (m *Model) Selection() keymap.Selection { return keymap.Selection{Sandbox: m.opts.Sandbox} }

// Typing while the search line has focus.
func (m *Model) Typing() bool { return m.searching }

// Ring exposes the lines held (tests, benchmarks).
func (m *Model) Ring() *logring.Ring { return m.ring }

// Bindings are the log keys with navigation; back ends the search or leaves.
func (m *Model) Bindings() []keymap.Name {
	return append(append([]keymap.Name(nil), screen.Nav...), keymap.Open, keymap.Back, keymap.Filter,
		keymap.SearchNext, keymap.SearchPrev, keymap.LogFollow, keymap.LogStamps, keymap.LogWrap, keymap.LogPause)
}

// Update folds batches into the ring and answers keys.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openedMsg:
		if msg.f != m.feed {
			return nil
		}
		if msg.err != nil {
			m.err, m.ended = msg.err.Error(), true
			return nil
		}
		return m.feed.wait(m.ctx)
	case batchMsg:
		if msg.f != m.feed {
			return nil
		}
		if m.paused { // a batch already on its way when the operator paused
			m.feed.unread(msg)
			return nil
		}
		m.fold(msg)
		if msg.ended {
			m.ended = true
			return nil
		}
		return m.feed.wait(m.ctx)
	case tea.KeyPressMsg:
		return m.key(c, msg)
	case tea.PasteMsg:
		if m.searching {
			m.input.Update(msg)
		}
	}
	return nil
}

func (m *Model) fold(b batchMsg) {
	for _, l := range b.lines {
		m.ring.AddLine(l)
	}
	m.dropped += b.dropped
	if b.err != nil {
		m.err = b.err.Error()
	}
	if first := m.firstSeq(); m.topSeq < first {
		m.topSeq = first
	}
}

func (m *Model) firstSeq() uint64 { return m.ring.Total() - uint64(m.ring.Len()) }

// index converts a sequence number to a ring index (clamped).
func (m *Model) index(seq uint64) int {
	first := m.firstSeq()
	if seq < first {
		return 0
	}
	return min(int(seq-first), max(m.ring.Len()-1, 0))
}

func (m *Model) key(c *screen.Context, k tea.KeyPressMsg) tea.Cmd {
	km := c.Keys
	if m.searching {
		switch {
		case km.IsControl(k, keymap.Open):
			m.searching, m.query = false, m.input.Value()
			m.find(c, m.index(m.topSeq), true)
		case km.IsControl(k, keymap.Back):
			m.searching = false
		default:
			m.input.Update(k)
		}
		return nil
	}
	switch {
	case km.Is(k, keymap.Back):
		if m.query != "" {
			m.query, m.matched = "", false
			return nil
		}
		c.Pop()
	case km.Is(k, keymap.Filter):
		m.searching, m.input = true, lineedit.New(m.query)
	case km.Is(k, keymap.SearchNext):
		m.find(c, m.index(m.matchSeq)+1, true)
	case km.Is(k, keymap.SearchPrev):
		m.find(c, m.index(m.matchSeq)-1, false)
	case km.Is(k, keymap.LogFollow):
		m.follow = !m.follow
		if !m.follow {
			m.topSeq = m.bottomTop()
		}
	case km.Is(k, keymap.LogStamps):
		m.stamps = !m.stamps
	case km.Is(k, keymap.LogWrap):
		m.wrap = !m.wrap
	case km.Is(k, keymap.LogPause):
		m.paused = !m.paused
		if !m.paused && !m.ended && m.feed != nil {
			return m.feed.wait(m.ctx)
		}
	case km.Is(k, keymap.Bottom):
		m.follow = true
	case km.Is(k, keymap.Open):
	default: // navigation: scrolling up leaves follow; reaching the end going down resumes it
		top, last := m.index(m.topSeq), m.index(m.bottomTop())
		if m.follow {
			top = last
		}
		pos := screen.Move(km, k, top, max(1, m.height-1), last)
		m.topSeq = m.firstSeq() + uint64(pos)
		m.follow = pos == last && (km.Is(k, keymap.Down) || km.Is(k, keymap.PageDown))
	}
	return nil
}

// bottomTop is the first line in view when following (without wrapping).
func (m *Model) bottomTop() uint64 {
	n := m.ring.Len()
	return m.firstSeq() + uint64(max(n-max(m.height, 1), 0))
}

// find moves to the next (or previous) line matching the query, starting at index from.
func (m *Model) find(c *screen.Context, from int, forward bool) {
	if m.query == "" {
		c.SetStatus("search: press " + c.Keys.Label(keymap.Filter) + " and type what to find")
		return
	}
	if !m.matched {
		from = m.index(m.topSeq)
		if m.follow {
			from = m.ring.Len() - 1
		}
	}
	i := m.ring.Find(m.query, from, forward)
	if i < 0 {
		m.matched = false
		c.SetStatus(fmt.Sprintf("search: %q not in the %d lines held", m.query, m.ring.Len()))
		return
	}
	m.matched, m.matchSeq = true, m.ring.At(i).Seq
	m.follow = false
	m.topSeq = m.firstSeq() + uint64(max(i-m.height/2, 0))
}
