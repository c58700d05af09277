// Package tui wires rangekeeper's Bubble Tea program: a stack of screens from views/ (the fleet
// at the bottom), the global bindings, and every action run as a command through the action
// layer so Update never blocks. Screens are registered in one table (registry.go) and sandbox
// bindings in another (flows.go).
package tui

import (
	"context"
	"os"
	"reflect"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/cmdline"
	"github.com/rangekeeper/rangekeeper/views/fleet"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
	"github.com/rangekeeper/rangekeeper/watch"
)

// Options configure the program.
type Options struct {
	Supervisor *supervisor.Supervisor // required: the live fleet
	Actions    *action.Layer          // nil: actions are unavailable (shown disabled)
	State      *state.DB              // nil: no journal view or cache
	Keys       *keymap.Map            // nil: keymap.Default()
	Theme      string                 // auto | dark | light | dark16 | light16 | none
	NoColor    bool
	ReadOnly   bool
	// Identity is who this session acts as; zero: the action layer's own (the local operator).
	Identity action.Identity
	Now      func() time.Time // nil: time.Now (tests pin it for golden files)
	Tick     time.Duration    // refresh of ages and retry countdowns; 0: 1 s
	// SaveCache writes the inventory cache; it runs in a command every CacheEvery (default 30 s)
	// so a killed workbench still paints a recent fleet at its next start.
	SaveCache  func() error
	CacheEvery time.Duration
	// StatsEvery is the detail view's resource sampling period; 0: 2 s, negative: never.
	StatsEvery time.Duration
	// BackgroundWait is how long to wait for the terminal's background colour answer; 0: 300 ms.
	BackgroundWait time.Duration

	// Verify runs `verify` on a spec from the author (as a task of the action layer); nil: the
	// author's verify key says it is not available.
	Verify func(ctx context.Context, o verify.Options) verify.Result

	// Team makes the program one session of a team daemon (team.go).
	Team TeamOptions
	// LogLines is the log screen's ring size; 0: 10,000.
	LogLines int
	// Watch is the containment watch (alerts, quarantine marks); nil: none (tui/watch.go).
	Watch *watch.Watcher
	// Evals links sandboxes to the Inspect samples running in them (EVAL and SAMPLE columns,
	// the sample panel, the agent's commands in the timeline); nil: none.
	Evals *inspectlive.Watcher
	// Open, when set, opens the state file (and what needs it) in a command after the first
	// frame; its result fills State, Actions and the cache (opened.go).
	Open func() (Opened, error)
}

// FPS is the renderer's frame cap: a key's frame waits up to 1/FPS (17 ms) for the renderer's
// tick. Since Bubble Tea v2.2 the ticker stops after half a second with nothing to draw, so a
// higher cap no longer costs an idle workbench CPU (v2.1 ticked for ever: 15 fps was the most an
// idle 1k-sandbox workbench could afford at ~0.5 % of a core).
const FPS = 60

// Model is the root Bubble Tea model: the screen stack and what every screen shares.
type Model struct {
	opts   Options
	keys   *keymap.Map
	theme  theme.Theme
	fleet  *fleet.Screen
	stack  []screen.Screen // stack[0] is the fleet, never popped
	cmd    *cmdline.Model  // kept across openings: it holds the history
	width  int
	height int
	ctx    context.Context
	cancel context.CancelFunc
	dark   bool
	bgSrc  string // where the background guess came from

	status    string
	running   map[string]runningAction // sandbox ID → action started from this UI
	lastSave  time.Time
	lastError string

	watch watchState // the containment watch's alerts and quarantines (watch.go)
	evals evalsState // Inspect's samples linked to the rows (evals.go)
	clk   clock      // clock.go
}

type runningAction struct {
	action  string
	started time.Time
}

type tickMsg time.Time

// bgTimeoutMsg fires when the terminal did not answer the background colour query in time.
type bgTimeoutMsg struct{}

// cacheErrMsg reports a failed cache save on the status line.
type cacheErrMsg struct{ err error }

// New builds the root model.
func New(opts Options) *Model {
	km := opts.Keys
	if km == nil {
		km = keymap.Default()
	}
	if opts.ReadOnly {
		km = km.ReadOnly()
	} else {
		km = km.Without(func(keymap.Binding) bool { return false }) // a copy: guards are this session's
	}
	km = opts.Team.teamKeys(km)
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
	m := &Model{opts: opts, keys: km, theme: th, ctx: ctx, cancel: cancel, dark: true, running: map[string]runningAction{},
		cmd: &cmdline.Model{}}
	m.bgSrc = "config theme " + opts.Theme
	if opts.Theme == "" || opts.Theme == "auto" {
		m.bgSrc = "waiting for the terminal"
	}
	fm := fleet.New(km, th)
	m.fleet = &fleet.Screen{Model: &fm, OnOpen: m.openDetail}
	m.fleet.Now = opts.Now
	m.fleet.ReadOnly = opts.ReadOnly
	m.fleet.Activity = func(id string) string { // progress in place on the sandbox's row
		return m.running[id].action
	}
	if opts.Supervisor != nil {
		m.fleet.SetHealthAll(opts.Supervisor.Health())
	}
	m.stack = []screen.Screen{m.fleet}
	m.initWatch()
	m.initEvals()
	m.cmd.OnSubmit = m.runCommandLine
	m.teamInit()
	m.guard()
	return m
}

// Fleet exposes the fleet screen (tests).
func (m *Model) Fleet() *fleet.Model { return m.fleet.Model }

// BackgroundSource says how the dark/light guess was made (shown in help).
func (m *Model) BackgroundSource() string { return m.bgSrc }

// Init starts listening to the supervisor and asks the terminal for its background colour.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.tick(), m.open()}
	if m.opts.Open == nil {
		m.beginWatch() // nothing to paint first
	}
	if m.opts.Supervisor != nil && !m.opts.Team.Shared {
		cmds = append(cmds, waitUpdates(m.ctx, m.opts.Supervisor))
	}
	cmds = append(cmds, m.watchCmds()...)
	cmds = append(cmds, m.evalsCmds()...)
	if m.opts.Theme == "" || m.opts.Theme == "auto" {
		cmds = append(cmds, tea.RequestBackgroundColor,
			tea.Tick(m.opts.BackgroundWait, func(time.Time) tea.Msg { return bgTimeoutMsg{} }))
	}
	return tea.Batch(cmds...)
}

func (m *Model) tick() tea.Cmd { return m.schedule() } // clock.go: the next moment a view changes

// waitUpdates blocks (in a command, never in Update) until the supervisor has news, then drains
// everything pending as one batch, so bursts of events cost one frame.
func waitUpdates(ctx context.Context, s *supervisor.Supervisor) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-ctx.Done():
			return nil
		case <-s.Notify():
			return fleet.Prepare(s.Drain()) // the rows of its resets built here, not in Update
		}
	}
}

// context is what screens see this frame.
func (m *Model) context() *screen.Context {
	return &screen.Context{Keys: m.keys, Theme: m.theme, Width: m.width, Height: m.height, Now: m.opts.Now(),
		ReadOnly: m.opts.ReadOnly, Status: m.status}
}

func (m *Model) top() screen.Screen { return m.stack[len(m.stack)-1] }

// update routes messages (Update, in clock.go, wraps it). It performs no I/O.
func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.fleet.SetSize(msg.Width, msg.Height)
		return m, nil
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.bgSrc = "terminal answered (dark)"
		if !m.dark {
			m.bgSrc = "terminal answered (light)"
		}
		m.theme = theme.Pick(m.opts.Theme, m.dark, m.opts.NoColor)
		return m, nil
	case bgTimeoutMsg:
		if m.bgSrc == "waiting for the terminal" {
			m.bgSrc = "no answer in " + m.opts.BackgroundWait.String() + ", dark assumed"
		}
		return m, nil
	case openedMsg:
		m.installOpened(msg)
		return m, nil
	case cacheErrMsg:
		m.setStatus("inventory cache: " + oneLine(msg.err.Error()))
		return m, nil
	case tickMsg:
		m.refreshProgress()
		return m, tea.Batch(m.maybeSaveCache(time.Time(msg)), m.broadcast(screen.Tick(msg)))
	case fleet.UpdatesMsg:
		m.pokeEvals() // a new or changed sandbox needs its link
		if m.opts.Team.Shared {
			return m, m.broadcast(msg)
		}
		return m, tea.Batch(m.broadcast(msg), waitUpdates(m.ctx, m.opts.Supervisor))
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case watchMsg:
		return m, m.onWatch(msg)
	case alertAckedMsg:
		return m, m.onAcked(msg)
	case evalsWakeMsg:
		return m, m.onEvalsWake(msg)
	case linksMsg:
		return m, m.onLinks(msg)
	}
	if cmd, ok := m.handleResult(msg); ok {
		return m, cmd
	}
	return m, m.broadcast(msg)
}

// broadcast gives a message to every screen on the stack, bottom first: a result finds the
// screen that asked for it even when another is on top.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, s := range append([]screen.Screen(nil), m.stack...) {
		c := m.context()
		cmds = append(cmds, s.Update(c, msg), m.apply(c))
	}
	return tea.Batch(cmds...)
}

// updateTop gives a message to the screen on top.
func (m *Model) updateTop(msg tea.Msg) tea.Cmd {
	c := m.context()
	cmd := m.top().Update(c, msg)
	return tea.Batch(cmd, m.apply(c))
}

// apply carries out the stack changes screens asked for, in order.
func (m *Model) apply(c *screen.Context) tea.Cmd {
	var cmds []tea.Cmd
	for _, op := range c.TakeOps() {
		switch {
		case op.Status != nil:
			m.setStatus(*op.Status)
		case op.Push != nil:
			cmds = append(cmds, m.push(op.Push))
		default:
			m.pop()
		}
	}
	return tea.Batch(cmds...)
}

// push opens s on top; a screen of the same kind already on top is replaced, not stacked.
func (m *Model) push(s screen.Screen) tea.Cmd {
	if len(m.stack) > 1 && reflect.TypeOf(m.top()) == reflect.TypeOf(s) {
		m.pop()
	}
	m.stack = append(m.stack, s)
	m.linkScreen(s) // evals.go: the sample panel, the agent's commands
	if o, ok := s.(screen.Opener); ok {
		c := m.context()
		return tea.Batch(o.Open(c), m.apply(c))
	}
	return nil
}

// pop closes the screen on top (never the fleet) and ends what it started.
func (m *Model) pop() {
	if len(m.stack) == 1 {
		return
	}
	top := m.top()
	m.stack = m.stack[:len(m.stack)-1]
	if cl, ok := top.(screen.Closer); ok {
		cl.Close()
	}
}

// toRoot closes every screen above the fleet.
func (m *Model) toRoot() {
	for len(m.stack) > 1 {
		m.pop()
	}
}

// handleKey: a modal takes every key; otherwise the top screen's own bindings win, then the
// sandbox bindings it shows (run by the program on its selection), then the global ones; what
// is left (text for an input) goes to the screen.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	top := m.top()
	if _, modal := top.(screen.Modal); modal {
		return m.updateTop(msg)
	}
	is := m.keys.Is
	if t, ok := top.(screen.Typing); ok && t.Typing() {
		is = m.keys.IsControl
	}
	for _, n := range top.Bindings() {
		if !is(msg, n) {
			continue
		}
		if _, ok := flows[n]; ok {
			return m.runBinding(n, m.selectionOf(top))
		}
		return m.updateTop(msg)
	}
	for _, n := range globalNames {
		if is(msg, n) {
			return m.global(n)
		}
	}
	for _, e := range registry {
		if e.key != "" && is(msg, e.key) {
			c := m.context()
			return tea.Batch(e.run(m, c, ""), m.apply(c))
		}
	}
	return m.updateTop(msg)
}

// globalNames are the bindings the program answers on every screen.
var globalNames = []keymap.Name{keymap.Quit, keymap.Back, keymap.Command, keymap.Cancel, keymap.Redraw}

func (m *Model) global(n keymap.Name) tea.Cmd {
	switch n {
	case keymap.Quit:
		if len(m.stack) > 1 {
			m.pop()
			return nil
		}
		m.cancel()
		return tea.Quit
	case keymap.Back:
		m.pop()
	case keymap.Command:
		m.cmd.Open()
		return m.push(m.cmd)
	case keymap.Cancel:
		return m.runBinding(keymap.Cancel, m.selection())
	case keymap.Redraw:
		return tea.ClearScreen
	}
	return nil
}

// selectionOf is what a screen's bindings act on; a screen without one lends the fleet's.
func (m *Model) selectionOf(s screen.Screen) keymap.Selection {
	if sel, ok := s.(screen.Selector); ok {
		return sel.Selection()
	}
	return m.fleet.Selection()
}

// selection is the selection of the screen on top (below any modal).
func (m *Model) selection() keymap.Selection {
	for i := len(m.stack) - 1; i >= 0; i-- {
		if _, modal := m.stack[i].(screen.Modal); !modal {
			return m.selectionOf(m.stack[i])
		}
	}
	return m.fleet.Selection()
}

// live are the bindings live on the screen on top (below any modal): its own, the program's
// global ones and the registered screens' keys.
func (m *Model) live() []keymap.Name {
	top := m.top()
	for i := len(m.stack) - 1; i >= 0; i-- {
		if _, modal := m.stack[i].(screen.Modal); !modal {
			top = m.stack[i]
			break
		}
	}
	names := append(append([]keymap.Name(nil), top.Bindings()...), globalNames...)
	return append(names, registryKeys...)
}

// subject is the one sandbox the top screen is about ("" for lists of many).
func (m *Model) subject() string {
	if s, ok := m.top().(interface{ Subject() string }); ok {
		return s.Subject()
	}
	return ""
}

// View renders the top screen, with the modals above it drawn over it.
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
		return tooSmall(m.theme, m.keys, m.width, m.height)
	}
	c := m.context()
	base := len(m.stack) - 1
	for base > 0 {
		if _, modal := m.stack[base].(screen.Modal); !modal {
			break
		}
		base--
	}
	s := m.stack[base].View(c)
	for _, over := range m.stack[base+1:] {
		s = over.(screen.Modal).Compose(s, c)
	}
	return s
}

// tooSmall is shown below the minimum size instead of a broken layout.
func tooSmall(th theme.Theme, km *keymap.Map, w, h int) string {
	msg := "terminal too small: " + itoa(w) + "x" + itoa(h) + " (need " + itoa(fleet.MinWidth) + "x" + itoa(fleet.MinHeight) + ")"
	return th.Err.Render(ansi.Truncate(msg, w, "~")) + "\n" + ansi.Truncate("resize, or press "+km.Label(keymap.Quit)+" to quit", w, "~")
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
