package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/state"
)

func init() {
	registerCommand(func(f *factory) *cobra.Command { return newRecoverCmd(f, nil) })
}

type recoverOptions struct {
	Sandbox string // "" lists the interrupted actions (or, with All, recovers every one)
	Record  uint64
	All     bool
	Output  string
}

func newRecoverCmd(f *factory, runF func(context.Context, *recoverOptions) error) *cobra.Command {
	o := &recoverOptions{}
	cmd := &cobra.Command{
		Use:   "recover [<sandbox>]",
		Short: "List interrupted actions, or finish / roll back a sandbox's from their write-ahead records",
		Long: "An action cut short (a crash, kill -9, a lost session) leaves a write-ahead record. Without an argument, recover lists\n" +
			"them; with a sandbox (its ID or name, also when no member is left) it finishes or rolls back each: a snapshot is\n" +
			"rolled back (members unpaused, partial images and archives removed) unless it was saved, a revert and a teardown are\n" +
			"finished, a probe's leftover binary is removed. The next action on a sandbox does the same first.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Sandbox = args[0]
			}
			if err := checkOutput(o.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *recoverOptions) error { return runRecover(ctx, f, o) })
		},
	}
	cmd.Flags().Uint64Var(&o.Record, "record", 0, "only this record (see `rangekeeper recover`)")
	cmd.Flags().BoolVar(&o.All, "all", false, "recover every interrupted action")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	return cmd
}

func runRecover(ctx context.Context, f *factory, o *recoverOptions) error {
	layer, _, err := f.Actions(ctx)
	if err != nil {
		return err
	}
	recs, err := layer.Interrupted()
	if err != nil {
		return err
	}
	var ids []string
	switch {
	case o.Sandbox != "":
		id, err := pendingSandbox(layer, recs, o.Sandbox)
		if err != nil {
			return exitWith(2, err.Error())
		}
		ids = []string{id}
	case o.All:
		seen := map[string]bool{}
		for _, r := range recs {
			if !seen[r.SandboxID] {
				seen[r.SandboxID] = true
				ids = append(ids, r.SandboxID)
			}
		}
	default:
		return listInterrupted(f, o.Output, recs)
	}
	failed := 0
	for _, id := range ids {
		did, err := layer.Recover(ctx, action.Request{SandboxID: id}, o.Record)
		for _, d := range did {
			fmt.Fprintf(f.Out, "%s: %s\n", backends.ShortName(id), redact.Cell(d))
		}
		if err != nil {
			failed++
			fmt.Fprintf(f.ErrOut, "%s: %s\n", id, redact.Message(err.Error()))
		}
	}
	if failed > 0 {
		return exitWith(1, fmt.Sprintf("%d of %d not recovered", failed, len(ids)))
	}
	return nil
}

// pendingSandbox resolves an argument against the live fleet, then against the sandboxes of
// interrupted actions (which may have no member left).
func pendingSandbox(layer *action.Layer, recs []state.Pending, arg string) (string, error) {
	if sb, err := layer.Resolve(arg); err == nil {
		return sb.ID, nil
	} else if !errors.Is(err, backends.ErrNotFound) {
		return "", err
	}
	var found []string
	for _, r := range recs {
		if (r.SandboxID == arg || backends.ShortName(r.SandboxID) == arg) && !containsString(found, r.SandboxID) {
			found = append(found, r.SandboxID)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no sandbox and no interrupted action named %q (see `rangekeeper ls`, `rangekeeper recover`)", backends.ErrNotFound, redact.Cell(arg))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%q is %w; use one of: %s", redact.Cell(arg), action.ErrAmbiguous, strings.Join(found, ", "))
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func listInterrupted(f *factory, output string, recs []state.Pending) error {
	if isData(output) {
		if recs == nil {
			recs = []state.Pending{}
		}
		return writeData(f.Out, output, recs)
	}
	if len(recs) == 0 {
		fmt.Fprintln(f.Out, "no interrupted actions")
		return nil
	}
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECORD\tACTION\tSANDBOX\tSTARTED\tBY\tREACHED\tHOW")
	for _, r := range recs {
		how := "process ended (pid " + fmt.Sprint(r.PID) + ")"
		if r.Failed != "" {
			how = "failed half-done"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Action, dash(r.SandboxID), r.Started.Local().Format(time.DateTime),
			dash(r.Operator), dash(r.LastStep()), how)
	}
	return tw.Flush()
}

// warnInterrupted tells, on stderr, of actions cut short that nobody finished yet.
func warnInterrupted(f *factory, layer *action.Layer) {
	recs, err := layer.Interrupted()
	if err != nil || len(recs) == 0 {
		return
	}
	for _, r := range recs {
		fmt.Fprintf(f.ErrOut, "rangekeeper: interrupted: %s of %s (record %d, reached %q); `rangekeeper recover %s` finishes it\n",
			r.Action, r.SandboxID, r.ID, redact.Cell(r.LastStep()), backends.ShortName(r.SandboxID))
	}
}
