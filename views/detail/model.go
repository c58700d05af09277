package detail

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/journal"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Model is the detail screen of one sandbox.
type Model struct {
	SB       backends.Sandbox
	Data     Data
	Loaded   bool
	Stale    string // why the sandbox's backend is unreachable ("" when live)
	StatsErr string
	Busy     string // action running on it, shown in the title
	src      Sources
	cpu, mem map[string]*Ring
	limit    map[string]uint64
	offset   int

	sample       SampleData // the Inspect sample panel (sample.go)
	sampleLoaded bool
	output       sampleOutput

	// The resource sampling loop is the screen's own subscription: it runs while the screen is
	// on the stack and ends when it is closed (stop cancels a sample in flight).
	stop context.CancelFunc
	ctx  context.Context
}

// New opens the screen for sb; data arrives later through SetData.
func New(sb backends.Sandbox, src Sources) *Model {
	return &Model{SB: sb, src: src, cpu: map[string]*Ring{}, mem: map[string]*Ring{}, limit: map[string]uint64{}}
}

type dataMsg struct {
	to   *Model
	data Data
}

type statsMsg struct {
	to    *Model
	stats []backends.MemberStats
	err   error
}

type statsTickMsg struct{ to *Model }

// SetSampleSources installs the Inspect sample panel's readers (before the screen opens).
func (m *Model) SetSampleSources(sample func(backends.Sandbox) SampleData, output func(inspectlive.Link, int64) (string, bool)) {
	m.src.Sample, m.src.Output = sample, output
}

// Open loads the records and starts sampling resource use.
func (m *Model) Open(c *screen.Context) tea.Cmd {
	m.ctx, m.stop = context.WithCancel(context.Background())
	m.follow()
	return tea.Batch(m.Refresh(c), m.sampleStats(), m.loadSample())
}

// Close ends the sampling loop.
func (m *Model) Close() {
	if m.stop != nil {
		m.stop()
	}
}

// Refresh reloads the records (an action may have added a snapshot, a probe, journal entries).
func (m *Model) Refresh(*screen.Context) tea.Cmd {
	src, sb := m.src, m.SB
	return func() tea.Msg { return dataMsg{to: m, data: Load(src, sb)} }
}

// sampleStats reads resource use once, when the backend can; the result schedules the next sample
// while the screen is open.
func (m *Model) sampleStats() tea.Cmd {
	if m.src.Stats == nil || m.src.StatsEvery < 0 {
		return nil
	}
	read, why := m.src.Stats(m.SB.ID)
	if read == nil {
		m.StatsErr = why
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		ss, err := read(ctx)
		return statsMsg{to: m, stats: ss, err: err}
	}
}

// follow keeps the sandbox current as backend events arrive.
func (m *Model) follow() {
	if m.src.Lookup == nil {
		return
	}
	if sb, stale, ok := m.src.Lookup(m.SB.ID); ok {
		m.SB, m.Stale = sb, stale
	}
}

// Bindings: scrolling, and the sandbox actions the program runs on this sandbox.
func (m *Model) Bindings() []keymap.Name {
	return []keymap.Name{keymap.Up, keymap.Down, keymap.Top, keymap.Bottom, keymap.PageUp, keymap.PageDown,
		keymap.Open, keymap.Snapshot, keymap.Revert, keymap.Teardown, keymap.Reset, keymap.Probe, keymap.Copy,
		keymap.Shell}
}

// Selection is the sandbox shown.
func (m *Model) Selection() keymap.Selection { return keymap.Selection{Sandbox: m.SB.ID} }

// Subject is the one sandbox the screen is about (the journal opens narrowed to it).
func (m *Model) Subject() string { return m.SB.ID }

// Update folds in loaded records, samples and backend events, and scrolls.
func (m *Model) Update(c *screen.Context, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case dataMsg:
		if msg.to == m && msg.data.SandboxID == m.SB.ID {
			m.SetData(msg.data)
		}
	case statsMsg:
		if msg.to != m || m.ctx.Err() != nil {
			return nil // the screen closed: the loop ends here
		}
		m.StatsErr = ""
		if msg.err != nil {
			m.StatsErr = strings.ReplaceAll(msg.err.Error(), "\n", " ")
		}
		m.AddStats(msg.stats)
		return tea.Tick(m.src.StatsEvery, func(time.Time) tea.Msg { return statsTickMsg{to: m} })
	case statsTickMsg:
		if msg.to == m && m.ctx.Err() == nil {
			return m.sampleStats()
		}
	case sampleMsg:
		if msg.to == m {
			m.sample, m.sampleLoaded = msg.data, true
		}
	case outputMsg:
		if msg.to == m && msg.seq == m.output.seq {
			m.output.text, m.output.ok, m.output.loading = msg.text, msg.ok, false
		}
	case SampleChanged:
		return m.loadSample()
	case screen.Tick:
		m.follow()
	case tea.KeyPressMsg:
		if c.Keys.Is(msg, keymap.Open) && m.src.Output != nil {
			return m.nextOutput(c)
		}
		m.Scroll(c.Keys, msg, max(1, c.Height-4))
	default:
		m.follow() // backend events: the program's store has the newest row
	}
	return nil
}

// SetData installs loaded records.
func (m *Model) SetData(d Data) { m.Data, m.Loaded = d, true }

// AddStats appends one sample per member to the bounded histories.
func (m *Model) AddStats(ss []backends.MemberStats) {
	for _, s := range ss {
		if m.cpu[s.Member] == nil {
			m.cpu[s.Member], m.mem[s.Member] = &Ring{}, &Ring{}
		}
		m.cpu[s.Member].Add(s.CPUPercent)
		m.mem[s.Member].Add(float64(s.MemBytes))
		m.limit[s.Member] = s.MemLimit
	}
}

// History returns a member's CPU and memory history (tests, benchmarks).
func (m *Model) History(member string) (cpu, mem []float64) {
	if m.cpu[member] == nil {
		return nil, nil
	}
	return m.cpu[member].Values(), m.mem[member].Values()
}

// Scroll moves by the keymap's navigation keys (View clamps to the last page).
func (m *Model) Scroll(km *keymap.Map, msg tea.KeyPressMsg, page int) {
	m.offset = screen.Move(km, msg, m.offset, page, 1<<30)
}

// View renders the screen at the context's size.
func (m *Model) View(c *screen.Context) string {
	th, w, h, now := c.Theme, c.Width, c.Height, c.Now
	if m.src.Busy != nil {
		m.Busy = m.src.Busy(m.SB.ID)
	}
	body := m.lines(c, w, now)
	head := body[:2]
	rest := body[2:]
	room := h - 4 // title, ID, the app's status line, footer
	m.offset = min(m.offset, max(0, len(rest)-room))
	out := append([]string{}, head...)
	for i := m.offset; i < len(rest) && len(out) < h-2; i++ {
		out = append(out, ansi.Truncate(rest[i], w, "~"))
	}
	for len(out) < h-2 {
		out = append(out, "")
	}
	out = append(out[:h-2], c.StatusLine())
	more := ""
	if len(rest) > room {
		more = fmt.Sprintf("  [%d-%d/%d]", m.offset+1, min(len(rest), m.offset+room), len(rest))
	}
	footer := th.Dim.Render(c.Keys.Labels(keymap.Down, keymap.Up)+" scroll") + "  " +
		c.Footer(m.Selection(), keymap.Snapshot, keymap.Revert, keymap.Teardown, keymap.Probe, keymap.Journal, keymap.Back)
	out = append(out, ansi.Truncate(footer+th.Dim.Render(more), w, "~"))
	return strings.Join(out, "\n")
}

func (m *Model) lines(c *screen.Context, w int, now time.Time) []string {
	th := c.Theme
	sb := m.SB
	title := fmt.Sprintf("%s  %s  %s", sb.Name, sb.Backend, sb.Status)
	if sb.Task != "" {
		title += "  task:" + sb.Task
	}
	if m.Busy != "" {
		title += "  [" + m.Busy + " running]"
	}
	if m.src.Marks != nil {
		if mk := m.src.Marks(sb.ID); mk != "" {
			title += "  " + mk
		}
	}
	title += m.sampleTitle()
	out := []string{th.Title.Render(ansi.Truncate(title, w, "~")), th.Dim.Render(ansi.Truncate(sb.ID, w, "~"))}
	if m.Stale != "" {
		out = append(out, th.Err.Render("backend unreachable: "+m.Stale))
	}
	if !sb.Actionable {
		out = append(out, th.Warn.Render("not a sandbox: rangekeeper will not act on it"))
	}
	var facts []string
	if !sb.Created.IsZero() {
		facts = append(facts, "created "+sb.Created.UTC().Format(time.RFC3339)+" ("+now.Sub(sb.Created).Round(time.Second).String()+" ago)")
	}
	if sb.Inspect {
		facts = append(facts, "made by Inspect")
	}
	if sb.Sample != "" {
		facts = append(facts, "sample "+sb.Sample)
	}
	if len(facts) > 0 {
		out = append(out, strings.Join(facts, "  "))
	}
	for _, kv := range sb.Extra {
		v := redact.Cell(kv.Value)
		if redact.IsSecretName(kv.Key) {
			v = redact.Mark
		}
		out = append(out, fmt.Sprintf("%s: %s", redact.Cell(kv.Key), v))
	}
	out = append(out, m.sampleLines(c, w, now)...)

	out = append(out, "", th.Header.Render(fmt.Sprintf("MEMBERS (%d)", len(sb.Members))))
	spark := 16
	for _, mem := range sb.Members {
		state := th.OK.Render(fmt.Sprintf("%-8s", mem.State))
		if !mem.Running {
			state = th.Warn.Render(fmt.Sprintf("%-8s", mem.State))
		}
		line := fmt.Sprintf("  %-12s %-28s %s %s", cut(mem.Service, 12), cut(mem.Name, 28), state, mem.Image)
		out = append(out, line)
		if r := m.cpu[mem.Name]; r != nil {
			c, _ := r.Last()
			mm, _ := m.mem[mem.Name].Last()
			top := float64(m.limit[mem.Name])
			if top == 0 {
				top = maxOf(m.mem[mem.Name].Values())
			}
			out = append(out, fmt.Sprintf("    cpu %-*s %5.1f%%   mem %-*s %s", spark, Sparkline(r.Values(), max(100, maxOf(r.Values())), spark), c,
				spark, Sparkline(m.mem[mem.Name].Values(), top, spark), bytes(uint64(mm))))
		}
	}
	if m.StatsErr != "" {
		out = append(out, th.Dim.Render("  resource use unavailable: "+m.StatsErr))
	}

	out = append(out, "", th.Header.Render(fmt.Sprintf("POSTURE (%d findings, worst %s)", len(sb.Findings), sevName(sb.WorstSeverity()))))
	if sb.PosturePending != "" {
		out = append(out, th.Dim.Render("  incomplete, "+sb.PosturePending))
	}
	byAxis := map[catalog.Axis][]backends.Finding{}
	var axes []catalog.Axis
	for _, f := range sb.Findings {
		if _, ok := byAxis[f.Axis]; !ok {
			axes = append(axes, f.Axis)
		}
		byAxis[f.Axis] = append(byAxis[f.Axis], f)
	}
	sort.Slice(axes, func(i, j int) bool { return fmt.Sprint(axes[i]) < fmt.Sprint(axes[j]) })
	if len(axes) == 0 {
		out = append(out, th.Dim.Render("  no findings reported by the backend"))
	}
	for _, a := range axes {
		fs := byAxis[a]
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity > fs[j].Severity })
		out = append(out, fmt.Sprintf("  %s", a))
		for _, f := range fs {
			line := fmt.Sprintf("    %-8s %-10s %s", sevName(f.Severity), f.RuleID, f.Message)
			if f.Member != "" {
				line += " (" + f.Member + ")"
			}
			out = append(out, th.Severity(f.Severity).Render(ansi.Truncate(line, w, "~")))
		}
	}

	d := m.Data
	gone := m.src.Gone != nil && m.src.Gone(m.SB.ID)
	head := fmt.Sprintf("SNAPSHOTS (%d)", len(d.Snapshots))
	if gone && len(d.Snapshots) > 0 {
		head += " — ORPHANED: the sandbox is gone; `rangekeeper snapshots prune` removes them"
	}
	out = append(out, "", th.Header.Render(ansi.Truncate(head, w, "~")))
	switch {
	case !m.Loaded:
		out = append(out, th.Dim.Render("  loading..."))
	case d.SnapErr != "":
		out = append(out, th.Dim.Render("  "+d.SnapErr))
	case len(d.Snapshots) == 0:
		out = append(out, th.Dim.Render("  none"+keyHint(c, keymap.Snapshot, "takes one")))
	}
	snaps := append([]backends.SnapshotInfo(nil), d.Snapshots...)
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].Created.After(snaps[j].Created) })
	for _, s := range snaps {
		line := fmt.Sprintf("  %s  %-20s %s", s.Created.UTC().Format("2006-01-02 15:04:05"), cut(s.Name, 20), s.ID)
		if gone {
			line += "  orphaned"
		}
		out = append(out, line)
	}

	out = append(out, "", th.Header.Render(fmt.Sprintf("PROBES (%d)", len(d.Probes))))
	if len(d.Probes) == 0 && m.Loaded {
		out = append(out, th.Dim.Render("  never probed"+keyHint(c, keymap.Probe, "runs the escape probe")))
	}
	for i := len(d.Probes) - 1; i >= 0; i-- {
		p := d.Probes[i]
		mark := "     "
		if i == len(d.Probes)-1 {
			mark = th.Key.Render("last ") // the last verdict is the one that counts
		}
		out = append(out, fmt.Sprintf("  %s%s  %-8s %s", mark, p.Time.UTC().Format("2006-01-02 15:04:05"), p.Worst, p.Summary))
	}

	if d.SpecPath != "" {
		out = append(out, "", th.Header.Render("SPEC "+d.SpecPath))
		if d.SpecErr != "" {
			out = append(out, th.Dim.Render("  "+d.SpecErr))
		}
		for _, l := range strings.Split(strings.TrimRight(d.Spec, "\n"), "\n") {
			if d.Spec != "" {
				out = append(out, "  "+strings.ReplaceAll(l, "\t", "  "))
			}
		}
	}

	out = append(out, "", th.Header.Render(fmt.Sprintf("JOURNAL (%d)", len(d.Journal))))
	if len(d.Journal) == 0 && m.Loaded {
		out = append(out, th.Dim.Render("  no actions recorded"))
	}
	for i := len(d.Journal) - 1; i >= 0; i-- {
		e := d.Journal[i]
		l := "  " + journal.Line(e, w-2)
		if e.Outcome == state.OutcomeFailed || e.Outcome == state.OutcomeRefused {
			l = th.Err.Render(l)
		}
		out = append(out, l)
	}
	if d.Err != "" {
		out = append(out, th.Err.Render(d.Err))
	}
	return out
}

// keyHint is " (<key> <what>)" in prose, from the keymap; "" when the binding does not exist.
func keyHint(c *screen.Context, n keymap.Name, what string) string {
	if l := c.Keys.Label(n); l != "" {
		return " (" + l + " " + what + ")"
	}
	return ""
}

func sevName(s catalog.Severity) string {
	if s <= catalog.SeverityNone {
		return "-"
	}
	return s.String()
}

func cut(s string, w int) string { return ansi.Truncate(s, w, "~") }

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

func bytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
