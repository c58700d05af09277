// Package tui wires rangekeeper's Bubble Tea program: the root model routes keys and messages to
// the screens in views/, turns backend updates into messages, and runs every backend call and
// action as a command so Update never blocks.
package tui

import (
	"context"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/tui/keys"
	"github.com/rangekeeper/rangekeeper/tui/theme"
	"github.com/rangekeeper/rangekeeper/views/fleet"
)

// Options configure the program.
type Options struct {
	Supervisor *supervisor.Supervisor // required: the live fleet
	Actions    *action.Layer          // nil: actions are unavailable (shown disabled)
	State      *state.DB              // nil: no journal view or cache
	Keys       *keys.Map              // nil: keys.Default()
	Theme      string                 // auto | dark | light | dark16 | light16 | none
	NoColor    bool
	ReadOnly   bool
	Now        func() time.Time // nil: time.Now (tests pin it for golden files)
	Tick       time.Duration    // refresh of ages and retry countdowns; 0: 1 s
}

// screen names the view in front.
type screen int

const (
	screenFleet screen = iota
	screenHelp
)

// Model is the root Bubble Tea model.
type Model struct {
	opts   Options
	keys   *keys.Map
	theme  theme.Theme
	fleet  fleet.Model
	screen screen
	width  int
	height int
	ctx    context.Context
	cancel context.CancelFunc
	dark   bool
}

type tickMsg time.Time

// New builds the root model.
func New(opts Options) *Model {
	km := opts.Keys
	if km == nil {
		km = keys.Default()
	}
	if opts.ReadOnly {
		km = km.ReadOnly()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Tick == 0 {
		opts.Tick = time.Second
	}
	if !opts.NoColor && os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	th := theme.Pick(opts.Theme, true, opts.NoColor)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{opts: opts, keys: km, theme: th, ctx: ctx, cancel: cancel, dark: true}
	m.fleet = fleet.New(km, th)
	m.fleet.Now = opts.Now
	m.fleet.ReadOnly = opts.ReadOnly
	if opts.Supervisor != nil {
		m.fleet.SetHealthAll(opts.Supervisor.Health())
	}
	return m
}

// LoadCache paints the inventory cache (stale) before backends answer.
func (m *Model) LoadCache(recs []state.InventoryRecord) {
	for _, rec := range recs {
		rows := make([]*fleet.Row, 0, len(rec.Sandboxes))
		for _, sb := range rec.Sandboxes {
			rows = append(rows, fleet.NewRow(rec.Backend, sb, true))
		}
		m.fleet.LoadCached(rec.Backend, rows)
	}
}

// Fleet exposes the fleet screen (tests).
func (m *Model) Fleet() *fleet.Model { return &m.fleet }

// Init starts listening to the supervisor and asks the terminal for its background colour.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.tick()}
	if m.opts.Supervisor != nil {
		cmds = append(cmds, waitUpdates(m.ctx, m.opts.Supervisor))
	}
	if m.opts.Theme == "" || m.opts.Theme == "auto" {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.opts.Tick, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// waitUpdates blocks (in a command, never in Update) until the supervisor has news, then drains
// everything pending as one batch, so bursts of events cost one frame.
func waitUpdates(ctx context.Context, s *supervisor.Supervisor) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-ctx.Done():
			return nil
		case <-s.Notify():
			return fleet.UpdatesMsg(s.Drain())
		}
	}
}

// Update routes messages. It performs no I/O.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.fleet.SetSize(msg.Width, msg.Height)
		return m, nil
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.theme = theme.Pick(m.opts.Theme, m.dark, m.opts.NoColor)
		m.fleet.Theme = m.theme
		return m, nil
	case tickMsg:
		return m, m.tick()
	case fleet.UpdatesMsg:
		var cmd tea.Cmd
		m.fleet, cmd = m.fleet.Update(msg)
		return m, tea.Batch(cmd, waitUpdates(m.ctx, m.opts.Supervisor))
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	}
	var cmd tea.Cmd
	m.fleet, cmd = m.fleet.Update(msg)
	return m, cmd
}

func (m *Model) handleKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if msg.String() == "ctrl+c" {
		m.cancel()
		return m, tea.Quit
	}
	if m.keys.Is(msg, "redraw") {
		return m, tea.ClearScreen
	}
	if m.screen == screenHelp {
		if m.keys.Is(msg, "back") || m.keys.Is(msg, "help") || m.keys.Is(msg, "quit") {
			m.screen = screenFleet
		}
		return m, nil
	}
	if m.fleet.Filtering() {
		var cmd tea.Cmd
		m.fleet, cmd = m.fleet.Update(msg)
		return m, cmd
	}
	switch {
	case m.keys.Is(msg, "quit"):
		m.cancel()
		return m, tea.Quit
	case m.keys.Is(msg, "help"):
		m.screen = screenHelp
		return m, nil
	case m.keys.Is(msg, "copy"):
		if r := m.fleet.Selected(); r != nil {
			m.fleet.Status = "copied " + r.SB.ID + " (OSC 52)"
			return m, tea.SetClipboard(r.SB.ID)
		}
		return m, nil
	}
	var cmd tea.Cmd
	m.fleet, cmd = m.fleet.Update(msg)
	return m, cmd
}

// View renders the screen in front.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "rangekeeper"
	return v
}

func (m *Model) render() string {
	if m.width == 0 || m.height == 0 {
		return ""
	}
	if m.width < fleet.MinWidth || m.height < fleet.MinHeight {
		return tooSmall(m.theme, m.width, m.height)
	}
	switch m.screen {
	case screenHelp:
		return helpView(m.theme, m.keys, m.width, m.height, m.opts.ReadOnly)
	}
	return m.fleet.View(m.disabledReason)
}

// disabledReason explains why a binding cannot act on the selected row.
func (m *Model) disabledReason(binding string, r *fleet.Row) string {
	return ""
}
