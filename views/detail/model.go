package detail

import (
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/tui/theme"
	"github.com/rangekeeper/rangekeeper/views/journal"
)

// Model is the detail screen of one sandbox.
type Model struct {
	SB       backends.Sandbox
	Data     Data
	Loaded   bool
	Stale    string // why the sandbox's backend is unreachable ("" when live)
	StatsErr string
	Busy     string // action running on it, shown in the title
	cpu, mem map[string]*Ring
	limit    map[string]uint64
	offset   int
}

// New opens the screen for sb; data arrives later through SetData.
func New(sb backends.Sandbox) Model {
	return Model{SB: sb, cpu: map[string]*Ring{}, mem: map[string]*Ring{}, limit: map[string]uint64{}}
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

// Update scrolls the screen.
func (m *Model) Update(msg tea.KeyPressMsg, page int) {
	switch msg.String() {
	case "j", "down":
		m.offset++
	case "k", "up":
		m.offset--
	case "pgdown", "ctrl+d":
		m.offset += page
	case "pgup", "ctrl+u":
		m.offset -= page
	case "g", "home":
		m.offset = 0
	}
	m.offset = max(0, m.offset)
}

// View renders the screen in w×h.
func (m *Model) View(th theme.Theme, w, h int, now time.Time) string {
	body := m.lines(th, w, now)
	head := body[:2]
	rest := body[2:]
	room := h - 3
	m.offset = min(m.offset, max(0, len(rest)-room))
	out := append([]string{}, head...)
	for i := m.offset; i < len(rest) && len(out) < h-1; i++ {
		out = append(out, ansi.Truncate(rest[i], w, "~"))
	}
	for len(out) < h-1 {
		out = append(out, "")
	}
	more := ""
	if len(rest) > room {
		more = fmt.Sprintf("  [%d-%d/%d]", m.offset+1, min(len(rest), m.offset+room), len(rest))
	}
	out = append(out, th.Dim.Render(ansi.Truncate("j/k scroll  s snapshot  r revert  D teardown  p probe  @ journal  esc back"+more, w, "~")))
	return strings.Join(out, "\n")
}

func (m *Model) lines(th theme.Theme, w int, now time.Time) []string {
	sb := m.SB
	title := fmt.Sprintf("%s  %s  %s", sb.Name, sb.Backend, sb.Status)
	if sb.Task != "" {
		title += "  task:" + sb.Task
	}
	if m.Busy != "" {
		title += "  [" + m.Busy + " running]"
	}
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
		out = append(out, fmt.Sprintf("%s: %s", kv.Key, kv.Value))
	}

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
	out = append(out, "", th.Header.Render(fmt.Sprintf("SNAPSHOTS (%d)", len(d.Snapshots))))
	switch {
	case !m.Loaded:
		out = append(out, th.Dim.Render("  loading..."))
	case d.SnapErr != "":
		out = append(out, th.Dim.Render("  "+d.SnapErr))
	case len(d.Snapshots) == 0:
		out = append(out, th.Dim.Render("  none (s takes one)"))
	}
	snaps := append([]backends.SnapshotInfo(nil), d.Snapshots...)
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].Created.After(snaps[j].Created) })
	for _, s := range snaps {
		out = append(out, fmt.Sprintf("  %s  %-20s %s", s.Created.UTC().Format("2006-01-02 15:04:05"), cut(s.Name, 20), s.ID))
	}

	out = append(out, "", th.Header.Render(fmt.Sprintf("PROBES (%d)", len(d.Probes))))
	if len(d.Probes) == 0 && m.Loaded {
		out = append(out, th.Dim.Render("  never probed (p runs the escape probe)"))
	}
	for i := len(d.Probes) - 1; i >= 0; i-- {
		p := d.Probes[i]
		line := fmt.Sprintf("  %s  %-8s %s", p.Time.UTC().Format("2006-01-02 15:04:05"), p.Worst, p.Summary)
		if i == len(d.Probes)-1 {
			line = th.Key.Render("last") + line[min(4, len(line)):]
		}
		out = append(out, line)
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
