package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
)

func init() {
	registerCommand(newSnapshotCmd)
	registerCommand(newSnapshotsCmd)
	registerCommand(newRevertCmd)
	registerCommand(newTeardownCmd)
	registerCommand(newExecCmd)
}

// resolveSandbox accepts a full sandbox ID or a unique sandbox name.
func resolveSandbox(s *supervisor.Supervisor, arg string) (backends.Sandbox, error) {
	if _, sb, ok := s.Lookup(arg); ok {
		return sb, nil
	}
	var found []backends.Sandbox
	for _, sb := range s.Fleet() {
		if sb.Name == arg {
			found = append(found, sb)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return backends.Sandbox{}, exitWith(2, fmt.Sprintf("no sandbox %q (see `rangekeeper ls`)", arg))
	}
	var ids []string
	for _, sb := range found {
		ids = append(ids, sb.ID)
	}
	return backends.Sandbox{}, exitWith(2, fmt.Sprintf("%q is ambiguous; use one of: %s", arg, strings.Join(ids, ", ")))
}

// actOn returns the action layer and the sandbox an argument names.
func (f *factory) actOn(ctx context.Context, arg string) (*action.Layer, backends.Sandbox, error) {
	layer, s, err := f.Actions(ctx)
	if err != nil {
		return nil, backends.Sandbox{}, err
	}
	sb, err := resolveSandbox(s, arg)
	return layer, sb, err
}

// confirmByName asks the operator to type the sandbox name, the way destructive actions are
// confirmed everywhere in rangekeeper. Without a terminal it refuses rather than guess.
func confirmByName(f *factory, verb string, names []string, yes bool) error {
	if yes {
		return nil
	}
	if !f.IsTerminal() {
		return exitWith(2, fmt.Sprintf("%s needs confirmation: run it in a terminal, or pass --yes", verb))
	}
	want := names[0]
	prompt := fmt.Sprintf("%s %s? Type the sandbox name to confirm: ", verb, want)
	if len(names) > 1 {
		want = fmt.Sprint(len(names))
		prompt = fmt.Sprintf("%s %d sandboxes (%s)? Type %d to confirm: ", verb, len(names), strings.Join(names, ", "), len(names))
	}
	fmt.Fprint(f.ErrOut, prompt)
	line, err := bufio.NewReader(f.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if strings.TrimSpace(line) != want {
		return exitWith(1, "not confirmed: nothing was changed")
	}
	return nil
}

func newSnapshotCmd(f *factory) *cobra.Command {
	var name, output string
	var noPause, memory bool
	cmd := &cobra.Command{
		Use:   "snapshot <sandbox>",
		Short: "Snapshot a sandbox (every member, its configuration and named volumes)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "table", "json"); err != nil {
				return err
			}
			layer, sb, err := f.actOn(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			info, err := layer.Snapshot(ctxOr(cmd), sb.ID, backends.SnapshotOptions{Name: name, NoPause: noPause, WithMemory: memory})
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(f.Out, info)
			}
			fmt.Fprintf(f.Out, "snapshot %s of %s taken (%d members)\n", info.ID, sb.Name, len(info.Members))
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "snapshot name")
	cmd.Flags().BoolVar(&noPause, "no-pause", false, "do not pause members while committing (Docker)")
	cmd.Flags().BoolVar(&memory, "memory", false, "include RAM state (Proxmox)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

func newSnapshotsCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{Use: "snapshots", Short: "List or remove snapshots"}
	var output string
	ls := &cobra.Command{
		Use:   "ls <sandbox>",
		Short: "List a sandbox's snapshots",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "table", "json"); err != nil {
				return err
			}
			layer, sb, err := f.actOn(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			snaps, err := layer.Snapshots(ctxOr(cmd), sb.ID)
			if err != nil {
				return err
			}
			if output == "json" {
				if snaps == nil {
					snaps = []backends.SnapshotInfo{}
				}
				return writeJSON(f.Out, snaps)
			}
			tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tCREATED\tMEMBERS")
			for _, sn := range snaps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", sn.ID, dash(sn.Name), sn.Created.Local().Format(time.DateTime), len(sn.Members))
			}
			return tw.Flush()
		},
	}
	ls.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	rm := &cobra.Command{
		Use:   "rm <sandbox> <snapshot>",
		Short: "Delete a snapshot and its images",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			layer, sb, err := f.actOn(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if err := layer.DeleteSnapshot(ctxOr(cmd), sb.ID, args[1]); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "snapshot %s of %s deleted\n", args[1], sb.Name)
			return nil
		},
	}
	cmd.AddCommand(ls, rm)
	return cmd
}

func newRevertCmd(f *factory) *cobra.Command {
	var yes, start bool
	cmd := &cobra.Command{
		Use:   "revert <sandbox> [<snapshot>]",
		Short: "Revert a sandbox to a snapshot (the newest when none is named)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			layer, sb, err := f.actOn(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			snap := ""
			if len(args) == 2 {
				snap = args[1]
			} else {
				snaps, err := layer.Snapshots(ctxOr(cmd), sb.ID)
				if err != nil {
					return err
				}
				if len(snaps) == 0 {
					return exitWith(2, fmt.Sprintf("%s has no snapshots", sb.Name))
				}
				snap = snaps[len(snaps)-1].ID
			}
			if err := confirmByName(f, "revert "+sb.Name+" to "+snap+":", []string{sb.Name}, yes); err != nil {
				return err
			}
			ctx := backends.WithProgress(ctxOr(cmd), func(step string) { fmt.Fprintf(f.ErrOut, "revert %s: %s\n", sb.Name, step) })
			if err := layer.Revert(ctx, sb.ID, snap, backends.RevertOptions{Start: start}, true); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "%s reverted to %s\n", sb.Name, snap)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&start, "start", true, "start members after the revert (Proxmox)")
	return cmd
}

func newTeardownCmd(f *factory) *cobra.Command {
	var yes, keep, force bool
	var parallel int
	var output string
	cmd := &cobra.Command{
		Use:   "teardown <sandbox>...",
		Short: "Remove sandboxes: members, then their networks and volumes",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "table", "json"); err != nil {
				return err
			}
			layer, s, err := f.Actions(cmd.Context())
			if err != nil {
				return err
			}
			var ids, names []string
			for _, a := range args {
				sb, err := resolveSandbox(s, a)
				if err != nil {
					return err
				}
				ids, names = append(ids, sb.ID), append(names, sb.Name)
			}
			if err := confirmByName(f, "tear down", names, yes); err != nil {
				return err
			}
			errs := layer.TeardownMany(ctxOr(cmd), ids, backends.TeardownOptions{KeepSnapshots: keep, Force: force}, true, parallel)
			return reportMany(f, output, "torn down", ids, errs)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&keep, "keep-snapshots", false, "keep the sandbox's snapshot images")
	cmd.Flags().BoolVar(&force, "force", false, "also act on resources not identified as sandboxes")
	cmd.Flags().IntVar(&parallel, "parallel", 8, "how many sandboxes at once")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

type manyResult struct {
	Sandbox string `json:"sandbox"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
}

func reportMany(f *factory, output, verb string, ids []string, errs []error) error {
	res := make([]manyResult, len(ids))
	failed := 0
	for i, id := range ids {
		res[i] = manyResult{Sandbox: id, OK: errs[i] == nil}
		if errs[i] != nil {
			res[i].Error = errs[i].Error()
			failed++
		}
	}
	if output == "json" {
		if err := writeJSON(f.Out, res); err != nil {
			return err
		}
	} else {
		for _, r := range res {
			if r.OK {
				fmt.Fprintf(f.Out, "%s %s\n", r.Sandbox, verb)
			} else {
				fmt.Fprintf(f.ErrOut, "%s: %s\n", r.Sandbox, r.Error)
			}
		}
	}
	if failed > 0 {
		return exitWith(1, fmt.Sprintf("%d of %d failed", failed, len(ids)))
	}
	return nil
}

func newExecCmd(f *factory) *cobra.Command {
	var member, user, workdir, output string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "exec <sandbox> [--member M] -- <cmd> [args...]",
		Short: "Run a command in a sandbox member (journaled)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "table", "json"); err != nil {
				return err
			}
			if cmd.ArgsLenAtDash() != 1 {
				return exitWith(2, "usage: rangekeeper exec <sandbox> [--member M] -- <cmd> [args...]")
			}
			layer, sb, err := f.actOn(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			res, err := layer.Exec(ctxOr(cmd), sb.ID, backends.ExecRequest{Member: member, Cmd: args[1:], User: user, WorkDir: workdir, Timeout: timeout, Stdin: stdinIfPiped(f)})
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(f.Out, map[string]any{"exit_code": res.ExitCode, "timed_out": res.TimedOut, "stdout": string(res.Stdout), "stderr": string(res.Stderr)})
			}
			f.Out.Write(res.Stdout)
			f.ErrOut.Write(res.Stderr)
			if res.TimedOut {
				return exitWith(124, "timed out")
			}
			if res.ExitCode != 0 {
				return exitWith(res.ExitCode, "")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&member, "member", "", "member (service, container name or ID); default: Inspect's default service")
	cmd.Flags().StringVar(&user, "user", "", "run as this user")
	cmd.Flags().StringVar(&workdir, "workdir", "", "working directory")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "kill the command after this long")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

func stdinIfPiped(f *factory) io.Reader {
	if f.stdinTTY {
		return nil
	}
	return f.In
}

func ctxOr(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
