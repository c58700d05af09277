package tui

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/views/timeline"
)

// AgentWindow is how far apart in time an exec alert and the agent's command may be and still
// be called one: the engine's exec_start and Inspect's SandboxEvent both carry the exec's start,
// but the pending tool call starts a moment before the exec it makes.
var AgentWindow = 5 * time.Second

// nameAlerts names, for each exec alert on a sandbox linked to a sample, the agent's command
// that made the exec. It reads the poller's snapshot only (memory): it still runs in a command,
// with the link refresh or the alerts screen's load.
func nameAlerts(w *inspectlive.Watcher, links map[string]inspectlive.Link, alerts []state.Alert) map[uint64]string {
	out := map[uint64]string{}
	if w == nil {
		return out
	}
	for _, a := range alerts {
		if a.Kind != state.AlertExec {
			continue
		}
		l, ok := links[a.SandboxID]
		if !ok {
			continue
		}
		if c, ok := agentCall(a, w.Commands(l.Eval.Key, l.SampleID, l.Epoch)); ok {
			out[a.ID] = describeCall(c, l)
		}
	}
	return out
}

// agentCall is the agent's command closest in time to the alert's exec whose program is the
// exec's. The engine never records an exec's arguments (they may hold secrets), so the program
// is all there is to compare; Inspect's Docker sandbox runs every command under `timeout`,
// which any of the agent's commands matches.
func agentCall(a state.Alert, cmds []inspectlive.Command) (inspectlive.Command, bool) {
	prog := ""
	if a.Event != nil {
		prog = a.Event.Attrs["command"]
	}
	if prog == "" {
		return inspectlive.Command{}, false // a time alone is not evidence
	}
	best, bestGap := -1, AgentWindow+1
	for i, c := range cmds {
		if c.Action != "exec" && !c.Pending {
			continue // read_file and write_file are not execs
		}
		gap := c.Time.Sub(a.Time)
		if gap < 0 {
			gap = -gap
		}
		if gap > AgentWindow || !sameProgram(prog, c) {
			continue
		}
		if gap < bestGap {
			best, bestGap = i, gap
		}
	}
	if best < 0 {
		return inspectlive.Command{}, false
	}
	return cmds[best], true
}

// sameProgram reports whether the exec's program can be the command's: timeout (Inspect's
// wrapper) is any command's, bash() and python() tool calls run bash, and a SandboxEvent's
// command names its program first.
func sameProgram(prog string, c inspectlive.Command) bool {
	prog = path.Base(prog)
	if prog == "timeout" {
		return true
	}
	if c.Pending {
		return prog == "bash" && (c.Function == "bash" || c.Function == "python")
	}
	first, _, _ := strings.Cut(strings.TrimSpace(c.Cmd), " ")
	return path.Base(first) == prog
}

// describeCall is the alert's words for the agent's command.
func describeCall(c inspectlive.Command, l inspectlive.Link) string {
	when := "ran"
	if c.Pending {
		when = "in flight"
	}
	fn := c.Function
	if fn == "" {
		fn = c.Action
	}
	return fmt.Sprintf("agent's %s %q (%s, sample %s/%d)", fn, agentCmd(c.Cmd), when, l.SampleID, l.Epoch)
}

// agentCmd is the command as the agent wrote it: bash() runs it as `bash --login -c '<cmd>'`.
func agentCmd(cmd string) string {
	if strings.HasPrefix(cmd, "attachment://") {
		return "(long command, in the sample panel)"
	}
	if rest, ok := strings.CutPrefix(cmd, "bash --login -c "); ok {
		if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' {
			rest = strings.ReplaceAll(rest[1:len(rest)-1], `'"'"'`, "'")
		}
		return rest
	}
	return cmd
}

// agentEntries are a linked sample's commands as timeline entries, marked as the agent's.
func agentEntries(w *inspectlive.Watcher, l inspectlive.Link) []state.TimelineEntry {
	if w == nil || !l.Linked() {
		return nil
	}
	var out []state.TimelineEntry
	actor := fmt.Sprintf("agent (sample %s/%d)", l.SampleID, l.Epoch)
	member := fmt.Sprintf("sample %s/%d", l.SampleID, l.Epoch) // the member is not known: the sample is
	for _, c := range w.Commands(l.Eval.Key, l.SampleID, l.Epoch) {
		e := state.TimelineEntry{Time: c.Time, Source: timeline.SourceAgent, Kind: c.Action, Member: member, Actor: actor, Detail: agentCmd(c.Cmd)}
		switch {
		case c.Pending:
			e.Kind, e.Detail = "tool", c.Function+" "+e.Detail+" (in flight)"
		case c.Exit != nil:
			e.Detail += fmt.Sprintf(" → exit %d", *c.Exit)
		case c.Result != "":
			e.Detail += " → " + c.Result
		}
		out = append(out, e)
	}
	return out
}

// alertEntries are the sandbox's alerts as timeline entries, with the agent's command that
// caused an exec alert when it is known.
func alertEntries(as []state.Alert, agent map[uint64]string) []state.TimelineEntry {
	out := make([]state.TimelineEntry, 0, len(as))
	for _, a := range as {
		d := strings.ToUpper(a.Severity.String()) + " " + a.Summary
		if call := agent[a.ID]; call != "" {
			d += " ← " + call
		}
		out = append(out, state.TimelineEntry{Time: a.Time, Source: timeline.SourceAlert, Kind: a.Kind, Member: a.Member, Detail: d})
	}
	return out
}
