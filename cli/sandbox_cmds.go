package cli

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
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

// Action commands are verb-first (`snapshot X`, `revert X`, `teardown X`), the docker/kubectl
// habit operators bring; collections are nouns with verbs (`snapshots ls|rm`).
func init() {
	registerCommand(func(f *factory) *cobra.Command { return newSnapshotCmd(f, nil) })
	registerCommand(func(f *factory) *cobra.Command { return newSnapshotsCmd(f, nil, nil) })
	registerCommand(func(f *factory) *cobra.Command { return newRevertCmd(f, nil) })
	registerCommand(func(f *factory) *cobra.Command { return newTeardownCmd(f, nil) })
	registerCommand(func(f *factory) *cobra.Command { return newExecCmd(f, nil) })
}

// actOn returns the action layer and the sandbox an argument names (action.ResolveSandbox's
// rule: a full ID, or a unique name); a name that resolves to nothing or to several is bad
// input (exit 2).
func (f *factory) actOn(ctx context.Context, arg string) (*action.Layer, backends.Sandbox, error) {
	layer, _, err := f.Actions(ctx)
	if err != nil {
		return nil, backends.Sandbox{}, err
	}
	sb, err := layer.Resolve(arg)
	if err != nil {
		return nil, backends.Sandbox{}, exitWith(2, err.Error())
	}
	return layer, sb, nil
}

// badRef turns a snapshot that does not resolve into bad input (exit 2); other errors pass.
func badRef(err error) error {
	if errors.Is(err, backends.ErrSnapshotNotFound) || errors.Is(err, action.ErrAmbiguous) || errors.Is(err, action.ErrBadName) {
		return exitWith(2, err.Error())
	}
	return err
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

type snapshotOptions struct {
	Sandbox string
	Name    string
	NoPause bool
	Memory  bool
	Output  string
}

func newSnapshotCmd(f *factory, runF func(context.Context, *snapshotOptions) error) *cobra.Command {
	o := &snapshotOptions{}
	cmd := &cobra.Command{
		Use:   "snapshot <sandbox>",
		Short: "Snapshot a sandbox (every member, its configuration and named volumes)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Sandbox = args[0]
			if err := checkOutput(o.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *snapshotOptions) error { return runSnapshot(ctx, f, o) })
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", "", "snapshot name")
	cmd.Flags().BoolVar(&o.NoPause, "no-pause", false, "do not pause members while committing (Docker)")
	cmd.Flags().BoolVar(&o.Memory, "memory", false, "include RAM state (Proxmox)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	return cmd
}

func runSnapshot(ctx context.Context, f *factory, o *snapshotOptions) error {
	layer, sb, err := f.actOn(ctx, o.Sandbox)
	if err != nil {
		return err
	}
	info, err := layer.Snapshot(ctx, action.Request{SandboxID: sb.ID}, backends.SnapshotOptions{Name: o.Name, NoPause: o.NoPause, WithMemory: o.Memory})
	if err != nil {
		return badRef(err)
	}
	if isData(o.Output) {
		return writeData(f.Out, o.Output, info)
	}
	fmt.Fprintf(f.Out, "snapshot %s (%s) of %s taken (%d members)\n", info.Name, info.ID, sb.Name, len(info.Members))
	return nil
}

type snapshotsLsOptions struct {
	Sandbox string
	Orphans bool
	Output  string
}

type snapshotsRmOptions struct {
	Sandbox  string
	Snapshot string // ID or unique name
	Yes      bool
}

func newSnapshotsCmd(f *factory, lsF func(context.Context, *snapshotsLsOptions) error, rmF func(context.Context, *snapshotsRmOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "snapshots", Short: "List or remove snapshots", Args: cobra.NoArgs}
	lo := &snapshotsLsOptions{}
	ls := &cobra.Command{
		Use:   "ls <sandbox> | ls --orphans",
		Short: "List a sandbox's snapshots (also of a sandbox that is gone), or every orphaned one",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				lo.Sandbox = args[0]
			}
			if (len(args) == 1) == lo.Orphans {
				return exitWith(2, "usage: rangekeeper snapshots ls <sandbox> | rangekeeper snapshots ls --orphans")
			}
			if err := checkOutput(lo.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			if lo.Orphans {
				return runOr(cmd, lo, lsF, func(ctx context.Context, o *snapshotsLsOptions) error { return runSnapshotsOrphans(ctx, f, o) })
			}
			return runOr(cmd, lo, lsF, func(ctx context.Context, o *snapshotsLsOptions) error { return runSnapshotsLs(ctx, f, o) })
		},
	}
	ls.Flags().StringVarP(&lo.Output, "output", "o", "table", "table, json or yaml")
	ro := &snapshotsRmOptions{}
	rm := &cobra.Command{
		Use:   "rm <sandbox> <snapshot>",
		Short: "Delete a snapshot (by ID or unique name) and its images",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ro.Sandbox, ro.Snapshot = args[0], args[1]
			return runOr(cmd, ro, rmF, func(ctx context.Context, o *snapshotsRmOptions) error { return runSnapshotsRm(ctx, f, o) })
		},
	}
	rm.Flags().BoolVarP(&ro.Yes, "yes", "y", false, "do not ask for confirmation")
	ls.Flags().BoolVar(&lo.Orphans, "orphans", false, "list the snapshots of sandboxes that no longer exist (no sandbox argument)")
	ls.Args = cobra.RangeArgs(0, 1)
	cmd.AddCommand(ls, rm, newSnapshotsPruneCmd(f, nil))
	return cmd
}

func runSnapshotsLs(ctx context.Context, f *factory, o *snapshotsLsOptions) error {
	layer, sb, err := f.actOnOrGone(ctx, o.Sandbox)
	if err != nil {
		return err
	}
	snaps, err := layer.Snapshots(ctx, sb.ID)
	if err != nil {
		return err
	}
	if isData(o.Output) {
		if snaps == nil {
			snaps = []backends.SnapshotInfo{}
		}
		return writeData(f.Out, o.Output, snaps)
	}
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tMEMBERS")
	for _, sn := range snaps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", dash(sn.ID), dash(sn.Name), sn.Created.Local().Format(time.DateTime), len(sn.Members))
	}
	return tw.Flush()
}

func runSnapshotsRm(ctx context.Context, f *factory, o *snapshotsRmOptions) error {
	layer, sb, err := f.actOnOrGone(ctx, o.Sandbox)
	if err != nil {
		return err
	}
	snap, err := layer.ResolveSnapshot(ctx, sb.ID, o.Snapshot)
	if err != nil {
		return badRef(err)
	}
	if err := confirmByName(f, "delete snapshot "+snapLabel(snap)+" of", []string{sb.Name}, o.Yes); err != nil {
		return err
	}
	if _, err := layer.DeleteSnapshot(ctx, action.Request{SandboxID: sb.ID, Confirmed: true}, snap.ID); err != nil {
		return badRef(err)
	}
	fmt.Fprintf(f.Out, "snapshot %s of %s deleted\n", snapLabel(snap), sb.Name)
	return nil
}

// snapLabel names a snapshot the way operators know it: its name, and its ID when they differ.
func snapLabel(s backends.SnapshotInfo) string {
	if s.Name == "" || s.Name == s.ID {
		return s.ID
	}
	return redact.Cell(s.Name) + " (" + s.ID + ")"
}

type revertOptions struct {
	Sandbox  string
	Snapshot string // ID or unique name; "" the newest
	Yes      bool
	Start    bool
}

func newRevertCmd(f *factory, runF func(context.Context, *revertOptions) error) *cobra.Command {
	o := &revertOptions{}
	cmd := &cobra.Command{
		Use:   "revert <sandbox> [<snapshot>]",
		Short: "Revert a sandbox to a snapshot named by ID or name (the newest when none is named)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Sandbox = args[0]
			if len(args) == 2 {
				o.Snapshot = args[1]
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *revertOptions) error { return runRevert(ctx, f, o) })
		},
	}
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&o.Start, "start", true, "start members after the revert (Proxmox)")
	return cmd
}

func runRevert(ctx context.Context, f *factory, o *revertOptions) error {
	layer, sb, err := f.actOn(ctx, o.Sandbox)
	if err != nil {
		return err
	}
	snap, err := layer.ResolveSnapshot(ctx, sb.ID, o.Snapshot)
	if err != nil {
		return badRef(err)
	}
	if err := confirmByName(f, "revert "+sb.Name+" to "+snapLabel(snap)+":", []string{sb.Name}, o.Yes); err != nil {
		return err
	}
	ctx = backends.WithProgress(ctx, func(step string) { fmt.Fprintf(f.ErrOut, "revert %s: %s\n", sb.Name, step) })
	if _, err := layer.Revert(ctx, action.Request{SandboxID: sb.ID, Confirmed: true}, snap.ID, backends.RevertOptions{Start: o.Start}); err != nil {
		return badRef(err)
	}
	fmt.Fprintf(f.Out, "%s reverted to %s\n", sb.Name, snapLabel(snap))
	return nil
}

type teardownOptions struct {
	Sandboxes []string
	Orphans   bool // the sandboxes Inspect left behind (evals --orphans), not named ones
	Yes       bool
	Keep      bool
	Force     bool
	Parallel  int
	Output    string
}

func newTeardownCmd(f *factory, runF func(context.Context, *teardownOptions) error) *cobra.Command {
	o := &teardownOptions{}
	cmd := &cobra.Command{
		Use:   "teardown <sandbox>... | teardown --orphans",
		Short: "Remove sandboxes: members, then their networks and volumes (--orphans: those whose Inspect eval is gone)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Sandboxes = args
			if (len(args) > 0) == o.Orphans {
				return exitWith(2, "usage: rangekeeper teardown <sandbox>... | rangekeeper teardown --orphans")
			}
			if o.Orphans && o.Force {
				return exitWith(2, "--force cannot go with --orphans: an orphan is a sandbox Inspect made")
			}
			if err := checkOutput(o.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			if o.Parallel < 1 {
				return exitWith(2, fmt.Sprintf("--parallel %d: want at least 1", o.Parallel))
			}
			if o.Orphans {
				return runOr(cmd, o, runF, func(ctx context.Context, o *teardownOptions) error { return runTeardownOrphans(ctx, f, o) })
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *teardownOptions) error { return runTeardown(ctx, f, o) })
		},
	}
	cmd.Flags().BoolVar(&o.Orphans, "orphans", false, "tear down the sandboxes whose Inspect eval process is gone and whose sample finished or eval ended (see evals --orphans)")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&o.Keep, "keep-snapshots", false, "keep the sandbox's snapshot images")
	cmd.Flags().BoolVar(&o.Force, "force", false, "also act on resources not identified as sandboxes")
	cmd.Flags().IntVar(&o.Parallel, "parallel", 8, "how many sandboxes at once")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	return cmd
}

func runTeardown(ctx context.Context, f *factory, o *teardownOptions) error {
	layer, _, err := f.Actions(ctx)
	if err != nil {
		return err
	}
	var reqs []action.Request
	var ids, names []string
	for _, a := range o.Sandboxes {
		sb, err := layer.Resolve(a)
		if err != nil {
			return exitWith(2, err.Error())
		}
		reqs = append(reqs, action.Request{SandboxID: sb.ID, Confirmed: true})
		ids, names = append(ids, sb.ID), append(names, sb.Name)
	}
	if err := confirmByName(f, "tear down", names, o.Yes); err != nil {
		return err
	}
	opts := backends.TeardownOptions{KeepSnapshots: o.Keep, Force: o.Force}
	errs := layer.Many(ctx, reqs, o.Parallel, func(ctx context.Context, req action.Request) error {
		return layer.Teardown(ctx, req, opts)
	})
	return reportMany(f, o.Output, "torn down", ids, errs)
}

type manyResult struct {
	Sandbox string `json:"sandbox"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
}

func reportMany(f *factory, output, verb string, ids []string, errs []error) error {
	res := make([]manyResult, len(ids))
	failed, refused := 0, 0
	for i, id := range ids {
		res[i] = manyResult{Sandbox: id, OK: errs[i] == nil}
		if errs[i] != nil {
			res[i].Error = redact.Message(errs[i].Error())
			failed++
			if isRefusal(errs[i]) {
				refused++
			}
		}
	}
	if isData(output) {
		if err := writeData(f.Out, output, res); err != nil {
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
	if failed > 0 && refused == failed {
		// Refused, not failed: exit 2 like every other refusal (read-only, not permitted).
		return exitWith(2, fmt.Sprintf("%d of %d refused", refused, len(ids)))
	}
	if failed > 0 {
		return exitWith(1, fmt.Sprintf("%d of %d failed", failed, len(ids)))
	}
	return nil
}

// isRefusal tells an action the layer refused (nothing was attempted) from one that failed.
func isRefusal(err error) bool {
	return errors.Is(err, action.ErrReadOnly) || errors.Is(err, action.ErrForbidden) || errors.Is(err, action.ErrNotConfirmed) ||
		errors.Is(err, action.ErrBusy) || errors.Is(err, action.ErrUnfinished) || errors.Is(err, backends.ErrNotSandbox)
}

type execOptions struct {
	Sandbox string
	Cmd     []string
	Member  string
	User    string
	WorkDir string
	Timeout time.Duration
	Output  string
	Raw     bool
}

func newExecCmd(f *factory, runF func(context.Context, *execOptions) error) *cobra.Command {
	o := &execOptions{}
	cmd := &cobra.Command{
		Use:   "exec <sandbox> [--member M] -- <cmd> [args...]",
		Short: "Run a command in a sandbox member (journaled)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			if cmd.ArgsLenAtDash() != 1 {
				return exitWith(2, "usage: rangekeeper exec <sandbox> [--member M] -- <cmd> [args...]")
			}
			o.Sandbox, o.Cmd = args[0], args[1:]
			return runOr(cmd, o, runF, func(ctx context.Context, o *execOptions) error { return runExec(ctx, f, o) })
		},
	}
	cmd.Flags().StringVar(&o.Member, "member", "", "member (service, container name or ID); default: Inspect's default service")
	cmd.Flags().StringVar(&o.User, "user", "", "run as this user")
	cmd.Flags().StringVar(&o.WorkDir, "workdir", "", "working directory")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", time.Minute, "kill the command after this long")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	cmd.Flags().BoolVar(&o.Raw, "raw", false, "print the command's bytes as they are, control sequences included")
	return cmd
}

func runExec(ctx context.Context, f *factory, o *execOptions) error {
	layer, sb, err := f.actOn(ctx, o.Sandbox)
	if err != nil {
		return err
	}
	res, err := layer.Exec(ctx, action.Request{SandboxID: sb.ID},
		backends.ExecRequest{Member: o.Member, Cmd: o.Cmd, User: o.User, WorkDir: o.WorkDir, Timeout: o.Timeout, Stdin: stdinIfPiped(f)})
	if err != nil {
		return err
	}
	if isData(o.Output) {
		return writeData(f.Out, o.Output, map[string]any{"exit_code": res.ExitCode, "timed_out": res.TimedOut, "stdout": string(res.Stdout), "stderr": string(res.Stderr)})
	}
	// A member's output could retitle the operator's terminal, write its clipboard or redraw
	// its screen, through a pipe as well (less -R, a file catted later): shown escaped.
	if o.Raw {
		f.Out.Write(res.Stdout)
		f.ErrOut.Write(res.Stderr)
	} else {
		f.Out.Write(redact.TerminalBytes(res.Stdout))
		f.ErrOut.Write(redact.TerminalBytes(res.Stderr))
	}
	if res.TimedOut {
		return exitWith(124, "timed out")
	}
	if res.ExitCode != 0 {
		return exitWith(res.ExitCode, "")
	}
	return nil
}

func stdinIfPiped(f *factory) io.Reader {
	if f.stdinTTY {
		return nil
	}
	return f.In
}
