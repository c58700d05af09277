package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/ttyshell"
	"github.com/rangekeeper/rangekeeper/views/logs"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/timeline"
)

// triageTarget is the sandbox a triage screen opens on: the argument of a `:` command (resolved
// like every sandbox argument, then an optional member), else the sandbox the screen on top is
// about or has selected.
func (m *Model) triageTarget(c *screen.Context, verb, arg string) (id, member string, ok bool) {
	f := strings.Fields(arg)
	if len(f) > 0 {
		sb, err := action.ResolveSandbox(m.fleetSandboxes(), f[0])
		if err != nil {
			c.SetStatus(verb + ": " + err.Error())
			return "", "", false
		}
		id = sb.ID
		if len(f) > 1 {
			member = f[1]
		}
		return id, member, true
	}
	if id = m.subject(); id == "" {
		id = m.selection().Sandbox
	}
	if id == "" {
		c.SetStatus(verb + ": no sandbox selected")
		return "", "", false
	}
	return id, "", true
}

// openLogs opens the log screen of a sandbox (every member interleaved) or one member, following
// from the last ring's worth of lines.
func openLogs(m *Model, c *screen.Context, arg string) tea.Cmd {
	id, member, ok := m.triageTarget(c, "logs", arg)
	if !ok {
		return nil
	}
	if m.opts.Supervisor == nil {
		c.SetStatus("logs: no backends")
		return nil
	}
	b, _, found := m.opts.Supervisor.Lookup(id)
	if !found {
		c.SetStatus("logs: " + backends.ShortName(id) + " is gone")
		return nil
	}
	lr, can := b.(backends.LogReader)
	if !can {
		c.SetStatus(fmt.Sprintf("logs: not available from %s", b.Kind()))
		return nil
	}
	lines := m.opts.LogLines
	if lines <= 0 {
		lines = 10_000
	}
	title := "logs " + m.name(id)
	if member != "" {
		title += " · " + member
	} else {
		title += " · every member"
	}
	c.Push(logs.New(logs.Options{Sandbox: id, Title: title, Lines: lines,
		Source: func(ctx context.Context) (backends.LogStream, error) {
			return lr.Logs(ctx, id, backends.LogOptions{Member: member, Follow: true, Tail: lines})
		}}))
	return nil
}

// openTimeline opens the timeline of a sandbox (recorded activity, journal, probes, posture).
func openTimeline(m *Model, c *screen.Context, arg string) tea.Cmd {
	id, _, ok := m.triageTarget(c, "timeline", arg)
	if !ok {
		return nil
	}
	var src timeline.Source
	if m.opts.State != nil {
		src = m.opts.State
	}
	c.Push(timeline.New(src, id, m.name(id)))
	return nil
}

// shellFlow suspends the workbench and connects the terminal to a shell in the sandbox's
// default member (tea.Exec: Bubble Tea gives the terminal back and repaints when it ends).
func (m *Model) shellFlow(_ *screen.Context, ids []string) tea.Cmd {
	return m.openShell(ids[0], backends.ShellRequest{})
}

func (m *Model) openShell(id string, sr backends.ShellRequest) tea.Cmd {
	layer, req := m.opts.Actions, m.request(backends.ActionShell, id)
	cmd := &ttyshell.Command{Ctx: m.ctx, Request: sr,
		Open: func(ctx context.Context, sr backends.ShellRequest) (backends.ShellResult, error) {
			return layer.Shell(ctx, req, sr)
		}}
	return tea.Exec(cmd, func(err error) tea.Msg {
		if cmd.Err != nil {
			err = cmd.Err
		}
		info := fmt.Sprintf("%s (%s) exited %d", cmd.Result.Member, strings.Join(cmd.Result.Cmd, " "), cmd.Result.ExitCode)
		return actionDoneMsg{action: backends.ActionShell, ids: []string{id}, errs: []error{err}, info: info}
	})
}

// openShellVerb is `:shell [sandbox [member [user]]]`.
func openShellVerb(m *Model, c *screen.Context, arg string) tea.Cmd {
	id, member, ok := m.triageTarget(c, "shell", arg)
	if !ok {
		return nil
	}
	sr := backends.ShellRequest{Member: member}
	if f := strings.Fields(arg); len(f) > 2 {
		sr.User = f[2]
	}
	if why := m.actionReason(backends.ActionShell, id); why != "" {
		c.SetStatus(why)
		return m.refusedShell(id, sr)
	}
	return m.openShell(id, sr)
}

// refusedShell is a shell the operator's identity may not open (a viewer's): the layer is asked
// all the same, without the terminal, so that the attempt is journaled refused with who asked.
// It refuses before it would touch the terminal. Other reasons (no such sandbox, a backend that
// cannot) are only shown.
func (m *Model) refusedShell(id string, sr backends.ShellRequest) tea.Cmd {
	layer, req := m.opts.Actions, m.request(backends.ActionShell, id)
	if layer == nil || !errors.Is(layer.Check(req), action.ErrForbidden) {
		return nil
	}
	// A context already ended: should the roster change in between and let it through, the
	// shell ends at once instead of running without a terminal.
	ctx, cancel := context.WithCancel(m.ctx)
	cancel()
	return func() tea.Msg {
		_, err := layer.Shell(ctx, req, sr)
		return actionDoneMsg{action: backends.ActionShell, ids: []string{id}, errs: []error{err}}
	}
}
