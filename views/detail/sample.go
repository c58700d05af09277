package detail

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// SampleCommands is how many of the agent's commands the sample panel lists, newest first.
const SampleCommands = 8

// SampleChanged tells an open detail that the links or the poller moved: it reloads its sample
// panel (in a command).
type SampleChanged struct{}

// SampleData is the Inspect sample the sandbox serves, as the panel shows it.
type SampleData struct {
	Link  inspectlive.Link
	State inspectlive.SampleState
	Known bool // State is the sample's: the poller holds it
}

type sampleMsg struct {
	to   *Model
	data SampleData
}

// outputMsg is one command's output, read from the sample buffer in a command.
type outputMsg struct {
	to   *Model
	seq  int64
	text string
	ok   bool
}

// sampleOutput is the output the panel shows: of which command, and what it said.
type sampleOutput struct {
	seq     int64
	cmd     string
	text    string
	ok      bool
	loading bool
}

// loadSample reads the link and the sample's state in a command (memory only, but the linker
// walks every eval's samples: it stays off the Update path like every other read).
func (m *Model) loadSample() tea.Cmd {
	if m.src.Sample == nil {
		return nil
	}
	read, sb := m.src.Sample, m.SB
	return func() tea.Msg { return sampleMsg{to: m, data: read(sb)} }
}

// commands are the sample's commands newest first: the in-flight tool call, then the completed.
func (d SampleData) commands() []inspectlive.Command {
	s := d.State
	out := make([]inspectlive.Command, 0, len(s.Commands)+1)
	if s.Pending != nil {
		out = append(out, *s.Pending)
	}
	for i := len(s.Commands) - 1; i >= 0; i-- {
		out = append(out, s.Commands[i])
	}
	return out
}

// nextOutput asks for the output of the next command (newest first, then older at each press,
// round again after the oldest), in a command: Output reads the sample buffer.
func (m *Model) nextOutput(c *screen.Context) tea.Cmd {
	var done []inspectlive.Command
	for _, cm := range m.sample.commands() {
		if !cm.Pending {
			done = append(done, cm)
		}
	}
	if m.src.Output == nil || len(done) == 0 {
		c.SetStatus("output: no completed command of the agent")
		return nil
	}
	next := done[0]
	for i, cm := range done {
		if cm.Seq == m.output.seq && i+1 < len(done) {
			next = done[i+1]
		}
	}
	m.output = sampleOutput{seq: next.Seq, cmd: next.Cmd, loading: true}
	read, l := m.src.Output, m.sample.Link
	return func() tea.Msg {
		text, ok := read(l, next.Seq)
		return outputMsg{to: m, seq: next.Seq, text: text, ok: ok}
	}
}

// sampleLines is the panel: how the sandbox is linked and why, the sample's progress, the
// agent's tool call in flight and last commands, errors, limits, the score once complete, and
// the output asked for.
func (m *Model) sampleLines(c *screen.Context, w int, now time.Time) []string {
	if m.src.Sample == nil || !m.sampleLoaded {
		return nil
	}
	th, d := c.Theme, m.sample
	l, s := d.Link, d.State
	head := "INSPECT SAMPLE"
	switch {
	case l.Linked():
		head += fmt.Sprintf("  %s  sample %s epoch %d", l.Eval.Task, l.SampleID, l.Epoch)
	case l.Eval.Task != "":
		head += "  " + l.Eval.Task + "  sample unknown"
	}
	out := []string{"", th.Header.Render(ansi.Truncate(head, w, "~"))}
	if l.How == inspectlive.HowUnknown || l.How == "" {
		return append(out, th.Dim.Render("  not linked: "+orNone(l.Why)))
	}
	out = append(out, fmt.Sprintf("  linked %s (%s): %s", l.How, markOf(l.How), l.Why))
	if l.Orphaned {
		out = append(out, th.Err.Render("  ORPHANED: the eval process is gone and the sandbox is still here (rangekeeper teardown --orphans removes such sandboxes)"))
	}
	if l.Superseded {
		out = append(out, th.Warn.Render("  superseded: an earlier attempt of a retried sample; a newer sandbox serves it"))
	}
	var eval []string
	if l.Eval.Model != "" {
		eval = append(eval, "model "+l.Eval.Model)
	}
	if l.Eval.PID != 0 {
		eval = append(eval, fmt.Sprintf("pid %d", l.Eval.PID))
	}
	if l.Eval.LogPath != "" {
		eval = append(eval, "log "+l.Eval.LogPath)
	}
	if len(eval) > 0 {
		out = append(out, "  "+strings.Join(eval, "  "))
	}
	if !d.Known {
		return append(out, th.Dim.Render("  no progress: the sample is in no sample buffer this workbench reads"))
	}
	prog := "  status " + string(s.Status)
	if e := elapsed(s, now); e > 0 {
		prog += "  elapsed " + e.Round(time.Second).String()
	}
	prog += fmt.Sprintf("  tokens %d", max(s.Tokens, s.Usage))
	if s.Retries > 0 {
		prog += fmt.Sprintf("  retries %d", s.Retries)
	}
	out = append(out, prog)
	if s.Status.Done() {
		score := s.Score
		if score == "" {
			score = "none"
		}
		line := "  score " + score
		if s.ScoreNote != "" {
			line += " (" + s.ScoreNote + ")"
		}
		out = append(out, line)
	}
	if p := s.Pending; p != nil {
		out = append(out, th.Warn.Render(fmt.Sprintf("  in flight: %s %s (started %s ago)", orNone(p.Function), oneLine(p.Cmd), now.Sub(p.Time).Round(time.Second))))
	}
	if s.Error != "" {
		out = append(out, th.Err.Render("  error: "+oneLine(s.Error)))
	}
	for _, e := range s.Errors {
		if e != s.Error {
			out = append(out, th.Err.Render("  error: "+oneLine(e)))
		}
	}
	if s.Limit != "" {
		out = append(out, th.Warn.Render("  limit hit: "+s.Limit))
	}
	for _, lim := range s.Limits {
		if lim != s.Limit {
			out = append(out, th.Warn.Render("  limit hit: "+lim))
		}
	}
	cmds := d.commands()
	hint := ""
	if m.src.Output != nil {
		hint = keyHint(c, keymap.Open, "shows a command's output")
	}
	out = append(out, fmt.Sprintf("  AGENT'S COMMANDS (last %d of %d)%s", min(len(cmds), SampleCommands), len(cmds), hint))
	for i, cm := range cmds {
		if i == SampleCommands {
			break
		}
		out = append(out, "    "+commandLine(cm))
	}
	if o := m.output; o.seq != 0 {
		out = append(out, fmt.Sprintf("  OUTPUT of %s", oneLine(o.cmd)))
		switch {
		case o.loading:
			out = append(out, th.Dim.Render("    loading..."))
		case !o.ok:
			out = append(out, th.Dim.Render("    not available (the sample left the buffer)"))
		default:
			for _, line := range strings.Split(strings.TrimRight(o.text, "\n"), "\n") {
				out = append(out, "    "+redact.Cell(strings.ReplaceAll(line, "\t", "  ")))
			}
		}
	}
	return out
}

// commandLine is one command: its time, exit (or in flight) and the command line.
func commandLine(c inspectlive.Command) string {
	exit := ""
	switch {
	case c.Pending:
		exit = "in flight"
	case c.Exit != nil:
		exit = fmt.Sprintf("exit %d", *c.Exit)
	case c.Result != "":
		exit = c.Result
	}
	act := c.Action
	if c.Pending {
		act = c.Function
	}
	line := fmt.Sprintf("%s  %-9s %-5s %s", c.Time.UTC().Format("15:04:05"), exit, act, oneLine(c.Cmd))
	if c.Reason != "" {
		line += " (" + c.Reason + ")"
	}
	return line
}

// elapsed is the sample's running time: the summary's total once done, else since it started.
func elapsed(s inspectlive.SampleState, now time.Time) time.Duration {
	if s.TotalTime > 0 && s.Status.Done() {
		return time.Duration(s.TotalTime * float64(time.Second))
	}
	if !s.StartedAt.IsZero() && !s.Status.Done() {
		return now.Sub(s.StartedAt)
	}
	if s.TotalTime > 0 {
		return time.Duration(s.TotalTime * float64(time.Second))
	}
	return 0
}

// markOf is the fleet's SAMPLE column mark for a certainty.
func markOf(h inspectlive.How) string {
	switch h {
	case inspectlive.HowExact:
		return "="
	case inspectlive.HowMatched, inspectlive.HowTrace:
		return "~"
	}
	return "?"
}

func oneLine(s string) string { return redact.Cell(strings.ReplaceAll(s, "\n", " ")) }

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sampleTitle is the title's word for an orphaned sandbox.
func (m *Model) sampleTitle() string {
	if m.sampleLoaded && m.sample.Link.Orphaned {
		return "  ORPHANED"
	}
	return ""
}
