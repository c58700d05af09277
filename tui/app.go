// Package tui wires rangekeeper's Bubble Tea program: the root model routes keys and messages to
// the screens in views/, turns backend updates into messages, and runs every backend call and
// action as a command so Update never blocks.
package tui

import (
	"context"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/theme"
	"github.com/rangekeeper/rangekeeper/views/cmdline"
	"github.com/rangekeeper/rangekeeper/views/detail"
	"github.com/rangekeeper/rangekeeper/views/dialog"
	"github.com/rangekeeper/rangekeeper/views/fleet"
	"github.com/rangekeeper/rangekeeper/views/journal"
	"github.com/rangekeeper/rangekeeper/views/probereport"
)

// ProbeFunc runs the escape probe on one sandbox inside an action-layer task and returns a
// one-line summary. The CLI supplies it (it owns the probe binary and targets).
type ProbeFunc func(ctx context.Context, b backends.Backend, sb backends.Sandbox) (summary string, err error)

// Options configure the program.
type Options struct {
	Supervisor *supervisor.Supervisor // required: the live fleet
	Actions    *action.Layer          // nil: actions are unavailable (shown disabled)
	State      *state.DB              // nil: no journal view or cache
	Keys       *keymap.Map              // nil: keymap.Default()
	Theme      string                 // auto | dark | light | dark16 | light16 | none
	NoColor    bool
	ReadOnly   bool
	Now        func() time.Time // nil: time.Now (tests pin it for golden files)
	Tick       time.Duration    // refresh of ages and retry countdowns; 0: 1 s
	Probe      ProbeFunc        // nil: the probe key is shown disabled with the reason
	// SaveCache writes the inventory cache; it runs in a command every CacheEvery (default 30 s)
	// so a killed workbench still paints a recent fleet at its next start.
	SaveCache  func() error
	CacheEvery time.Duration
	// StatsEvery is the detail view's resource sampling period; 0: 2 s, negative: never.
	StatsEvery time.Duration
	// BackgroundWait is how long to wait for the terminal's background colour answer; 0: 300 ms.
	BackgroundWait time.Duration
}

// FPS is the renderer's frame cap. Bubble Tea's renderer ticks at this rate even when idle, and
// that ticker is most of an idle program's CPU: 15 frames a second keeps an idle workbench with
// 1k sandboxes near 0.5 % of a core (30 fps: ~0.7–0.9 %) and still redraws within 67 ms of a key.
const FPS = 15

// screen names the view in front.
type screen int

const (
	screenFleet screen = iota
	screenHelp
	screenDetail
	screenJournal
	screenTasks
	screenList
	screenAuthor
	screenProbe
)

// Model is the root Bubble Tea model.
type Model struct {
	opts   Options
	keys   *keymap.Map
	theme  theme.Theme
	fleet  fleet.Model
	screen screen
	prev   screen // where esc returns from journal/tasks/list
	width  int
	height int
	ctx    context.Context
	cancel context.CancelFunc
	dark   bool
	bgSrc  string // where the background guess came from

	detail    detail.Model
	statsGen  int
	journal   journal.Model
	list      listScreen
	tasks     []action.Task
	author    tea.Model
	probeView *probereport.Model // the probe report in front, when screenProbe
	dialog    *dialog.Model
	cmd       cmdline.Model
	running   map[string]runningAction // sandbox ID → action started from this UI
	lastSave  time.Time
	lastError string
}

type runningAction struct {
	action  backends.Action
	started time.Time
}

type tickMsg time.Time

// bgTimeoutMsg fires when the terminal did not answer the background colour query in time.
type bgTimeoutMsg struct{}

// New builds the root model.
func New(opts Options) *Model {
	km := opts.Keys
	if km == nil {
		km = keymap.Default()
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
	if opts.StatsEvery == 0 {
		opts.StatsEvery = 2 * time.Second
	}
	if opts.BackgroundWait == 0 {
		opts.BackgroundWait = 300 * time.Millisecond
	}
	if !opts.NoColor && os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	th := theme.Pick(opts.Theme, true, opts.NoColor)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{opts: opts, keys: km, theme: th, ctx: ctx, cancel: cancel, dark: true, running: map[string]runningAction{}}
	m.bgSrc = "config theme " + opts.Theme
	if opts.Theme == "" || opts.Theme == "auto" {
		m.bgSrc = "waiting for the terminal"
	}
	m.fleet = fleet.New(km, th)
	m.fleet.Now = opts.Now
	m.fleet.ReadOnly = opts.ReadOnly
	m.fleet.Activity = func(id string) string { // progress in place on the sandbox's row
		if ra, ok := m.running[id]; ok {
			return string(ra.action)
		}
		return ""
	}
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

// BackgroundSource says how the dark/light guess was made (shown in help).
func (m *Model) BackgroundSource() string { return m.bgSrc }

// Init starts listening to the supervisor and asks the terminal for its background colour.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.tick()}
	if m.opts.Supervisor != nil {
		cmds = append(cmds, waitUpdates(m.ctx, m.opts.Supervisor))
	}
	if m.opts.Theme == "" || m.opts.Theme == "auto" {
		cmds = append(cmds, tea.RequestBackgroundColor,
			tea.Tick(m.opts.BackgroundWait, func(time.Time) tea.Msg { return bgTimeoutMsg{} }))
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
		if m.author != nil {
			var cmd tea.Cmd
			m.author, cmd = m.author.Update(msg)
			return m, cmd
		}
		return m, nil
	case probereport.BackMsg:
		return m.updateProbe(msg)
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.bgSrc = "terminal answered (dark)"
		if !m.dark {
			m.bgSrc = "terminal answered (light)"
		}
		m.setTheme(theme.Pick(m.opts.Theme, m.dark, m.opts.NoColor))
		return m, nil
	case bgTimeoutMsg:
		if m.bgSrc == "waiting for the terminal" {
			m.bgSrc = "no answer in " + m.opts.BackgroundWait.String() + ", dark assumed"
		}
		return m, nil
	case cacheErrMsg:
		m.setStatus("inventory cache: " + oneLine(msg.err.Error()))
		return m, nil
	case tickMsg:
		m.refreshProgress()
		return m, tea.Batch(m.tick(), m.maybeSaveCache(time.Time(msg)))
	case fleet.UpdatesMsg:
		var cmd tea.Cmd
		m.fleet, cmd = m.fleet.Update(msg)
		m.followDetail()
		return m, tea.Batch(cmd, waitUpdates(m.ctx, m.opts.Supervisor))
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	}
	if model, cmd, ok := m.handleResult(msg); ok {
		return model, cmd
	}
	if m.author != nil && m.screen == screenAuthor {
		return m.updateAuthor(msg)
	}
	var cmd tea.Cmd
	m.fleet, cmd = m.fleet.Update(msg)
	return m, cmd
}

func (m *Model) setTheme(th theme.Theme) {
	m.theme = th
	m.fleet.Theme = th
}

// followDetail keeps the detail screen's sandbox current as backend events arrive.
func (m *Model) followDetail() {
	if m.screen != screenDetail {
		return
	}
	if r, ok := m.fleet.Store().Get(m.detail.SB.ID); ok {
		m.detail.SB = r.SB
		m.detail.Stale = ""
		if r.Stale {
			m.detail.Stale = m.fleet.StaleReason(r.Backend)
		}
	}
}

func (m *Model) handleKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if msg.String() == "ctrl+c" && m.dialog == nil && !m.cmd.Active {
		m.cancel()
		return m, tea.Quit
	}
	if m.dialog != nil {
		return m.updateDialog(msg)
	}
	if m.cmd.Active {
		line, done := m.cmd.Update(msg)
		if done && line != "" {
			return m.runCommandLine(line)
		}
		return m, nil
	}
	if m.screen == screenAuthor && m.author != nil {
		return m.updateAuthor(msg)
	}
	if m.screen == screenProbe {
		return m.updateProbe(msg)
	}
	if m.screen == screenFleet && m.fleet.Filtering() {
		var cmd tea.Cmd
		m.fleet, cmd = m.fleet.Update(msg)
		return m, cmd
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
	switch {
	case m.keys.Is(msg, "quit"):
		if m.screen != screenFleet {
			return m.back()
		}
		m.cancel()
		return m, tea.Quit
	case m.keys.Is(msg, "help"):
		m.screen = screenHelp
		return m, nil
	case m.keys.Is(msg, "command"):
		m.cmd.Open()
		return m, nil
	case m.keys.Is(msg, "journal"):
		target := ""
		if m.screen == screenDetail {
			target = m.detail.SB.ID
		}
		return m, m.openJournal(target)
	case m.keys.Is(msg, "tasks"):
		m.openTasks()
		return m, nil
	case m.keys.Is(msg, "cancel"):
		return m, m.cancelSelected()
	case m.keys.Is(msg, "author"):
		return m, m.openAuthor()
	}
	if m.screen == screenFleet || m.screen == screenDetail {
		if model, cmd, ok := m.sandboxKey(msg); ok {
			return model, cmd
		}
	}
	switch m.screen {
	case screenDetail, screenJournal, screenTasks, screenList:
		if m.keys.Is(msg, "back") {
			return m.back()
		}
		page := max(1, m.height-4)
		switch m.screen {
		case screenDetail:
			m.detail.Update(msg, page)
		case screenJournal:
			m.journal.Update(msg, page)
		case screenList:
			m.list.update(msg, page)
		}
		return m, nil
	}
	if m.keys.Is(msg, "open") {
		return m, m.openDetail()
	}
	var cmd tea.Cmd
	m.fleet, cmd = m.fleet.Update(msg)
	return m, cmd
}

// back leaves the screen in front.
func (m *Model) back() (tea.Model, tea.Cmd) {
	switch m.screen {
	case screenJournal, screenTasks, screenList:
		if m.prev == screenDetail {
			m.screen = screenDetail
			return m, nil
		}
	case screenDetail:
		m.statsGen++ // stops the sampling loop
	}
	m.screen = screenFleet
	return m, nil
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
	var s string
	now := m.opts.Now()
	switch m.screen {
	case screenHelp:
		r, _ := m.selectedSandbox()
		s = helpView(m.theme, m.keys, m.width, m.height, m.opts.ReadOnly, m.bgSrc, func(name string) string {
			if _, ok := bindingAction[name]; !ok {
				return ""
			}
			return m.disabledReason(name, r)
		})
	case screenDetail:
		m.detail.Busy = ""
		if ra, ok := m.running[m.detail.SB.ID]; ok {
			m.detail.Busy = string(ra.action)
		}
		s = m.detail.View(m.theme, m.width, m.height, now)
	case screenJournal:
		s = m.journal.View(m.theme, m.width, m.height, now)
	case screenTasks:
		s = tasksView(m.theme, m.tasks, m.width, m.height, now)
	case screenList:
		s = m.list.view(m.theme, m.width, m.height)
	case screenAuthor:
		if m.author != nil {
			s = m.author.View().Content
		}
	case screenProbe:
		if m.probeView != nil {
			m.probeView.SetSize(m.width, m.height)
			s = m.probeView.Render()
		}
	default:
		s = m.fleet.View(m.disabledReason)
	}
	if m.screen != screenFleet && m.screen != screenAuthor && m.screen != screenHelp && m.screen != screenProbe && m.fleet.Status != "" {
		// Progress and results show in place on every screen, on the line above the footer.
		lines := strings.Split(s, "\n")
		if len(lines) >= 2 {
			lines[len(lines)-2] = m.theme.Warn.Render(ansi.Truncate(m.fleet.Status, m.width, "~"))
			s = strings.Join(lines, "\n")
		}
	}
	if m.dialog != nil {
		s = dialog.Overlay(s, m.dialog.Box(m.theme, m.width), m.width, m.height)
	}
	if m.cmd.Active {
		lines := strings.Split(s, "\n")
		lines[len(lines)-1] = m.theme.Key.Render(":") + m.cmd.Input + "_"
		s = strings.Join(lines, "\n")
	}
	return s
}

// maybeSaveCache returns a command that saves the inventory cache when it is due.
func (m *Model) maybeSaveCache(now time.Time) tea.Cmd {
	if m.opts.SaveCache == nil {
		return nil
	}
	every := m.opts.CacheEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	if m.lastSave.IsZero() {
		m.lastSave = now // the first save waits a full period: the fleet is still arriving
		return nil
	}
	if now.Sub(m.lastSave) < every {
		return nil
	}
	m.lastSave = now
	save := m.opts.SaveCache
	return func() tea.Msg {
		if err := save(); err != nil {
			return cacheErrMsg{err}
		}
		return nil
	}
}

// cacheErrMsg reports a failed cache save on the status line.
type cacheErrMsg struct{ err error }
