package cli

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/state"
)

// sourceAgent marks the timeline entries that are the agent's own commands in its sandbox, read
// from the Inspect sample it runs (the tool calls and sandbox execs of its transcript), not
// from the engine or rangekeeper.
const sourceAgent = "agent"

// sandboxFromID is what a full ID alone says of a sandbox gone (or not looked up): its backend
// and name, which is all a Docker sandbox's trace link needs; a Kubernetes or Proxmox link
// needs the live sandbox's labels.
func sandboxFromID(id string) backends.Sandbox {
	p, err := backends.ParseID(id)
	if err != nil {
		return backends.Sandbox{ID: id}
	}
	return backends.Sandbox{ID: id, Name: p.Name(), Backend: p.Kind, Endpoint: p.Backend()}
}

// agentEntries are the commands the agent of the sandbox's sample ran, oldest first, as timeline
// entries; none when the sandbox links to no sample this host's Inspect files hold. Inspect
// keeps the last inspectlive's MaxCommands of them in the buffer, so a long run shows its tail.
func agentEntries(ctx context.Context, w *inspectlive.Watcher, sb backends.Sandbox, since time.Time) []state.TimelineEntry {
	if w == nil {
		return nil
	}
	l := w.Link(sb)
	if !l.Linked() || l.Eval.Key == "" {
		return nil
	}
	var out []state.TimelineEntry
	for _, c := range w.Commands(l.Eval.Key, l.SampleID, l.Epoch) {
		if c.Time.Before(since) {
			continue
		}
		cmd := c.Cmd
		if strings.HasPrefix(cmd, "attachment://") {
			if full, err := w.Resolve(ctx, l.Eval.Key, l.SampleID, l.Epoch, cmd); err == nil {
				cmd = full
			}
		}
		e := state.TimelineEntry{Time: c.Time, Source: sourceAgent, Kind: agentKind(c), Detail: cmd,
			Attrs: map[string]string{"sample": l.SampleID, "epoch": strconv.Itoa(l.Epoch), "link": string(l.How)}}
		if l.Eval.Task != "" {
			e.Attrs["task"] = l.Eval.Task
		}
		switch {
		case c.Pending:
			e.Attrs["state"] = "running"
		case c.Exit != nil:
			e.Attrs["exit_code"] = strconv.Itoa(*c.Exit)
		case c.Result != "":
			e.Attrs["result"] = c.Result
		}
		if c.Reason != "" {
			e.Attrs["reason"] = c.Reason
		}
		out = append(out, e)
	}
	return out
}

// agentKind names the command as Inspect recorded it: a sandbox exec (or file read/write) that
// completed, or the tool call the agent is waiting on.
func agentKind(c inspectlive.Command) string {
	switch {
	case c.Pending && c.Function != "":
		return "tool call " + c.Function
	case c.Pending:
		return "tool call"
	case c.Action == "exec":
		return "sandbox exec"
	default:
		return "sandbox " + c.Action
	}
}

// mergeByTime merges the agent's entries into the recorded ones, oldest first; at the same
// instant what was recorded comes first.
func mergeByTime(recorded, agent []state.TimelineEntry) []state.TimelineEntry {
	if len(agent) == 0 {
		return recorded
	}
	out := append(append(make([]state.TimelineEntry, 0, len(recorded)+len(agent)), recorded...), agent...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}
