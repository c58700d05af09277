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

	units "github.com/docker/go-units"
	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

// actOnOrGone is actOn for commands that may name a sandbox removed outside rangekeeper whose
// snapshots are still stored (orphans): its full ID or name is matched against the records.
func (f *factory) actOnOrGone(ctx context.Context, arg string) (*action.Layer, backends.Sandbox, error) {
	layer, sup, err := f.Actions(ctx)
	if err != nil {
		return nil, backends.Sandbox{}, err
	}
	sb, rerr := layer.Resolve(arg)
	if rerr == nil {
		return layer, sb, nil
	}
	if !errors.Is(rerr, backends.ErrNotFound) {
		return nil, backends.Sandbox{}, exitWith(2, rerr.Error())
	}
	orphans, err := layer.OrphanSnapshots(ctx, connected(sup))
	if err != nil {
		return nil, backends.Sandbox{}, err
	}
	for _, o := range orphans {
		if o.SandboxID == arg || backends.ShortName(o.SandboxID) == arg {
			return layer, backends.Sandbox{ID: o.SandboxID, Name: backends.ShortName(o.SandboxID)}, nil
		}
	}
	return nil, backends.Sandbox{}, exitWith(2, rerr.Error())
}

// connected says which backends answered, so a sandbox on an unreachable one is not called gone.
func connected(s *supervisor.Supervisor) func(string) bool {
	up := map[string]bool{}
	for _, h := range s.Health() {
		up[h.Backend] = h.State == supervisor.StateConnected
	}
	return func(name string) bool { return up[name] }
}

func runSnapshotsOrphans(ctx context.Context, f *factory, o *snapshotsLsOptions) error {
	layer, sup, err := f.Actions(ctx)
	if err != nil {
		return err
	}
	orphans, err := layer.OrphanSnapshots(ctx, connected(sup))
	if err != nil {
		return err
	}
	if isData(o.Output) {
		if orphans == nil {
			orphans = []action.Orphan{}
		}
		return writeData(f.Out, o.Output, orphans)
	}
	return orphanTable(f, orphans)
}

func orphanTable(f *factory, orphans []action.Orphan) error {
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX (GONE)\tID\tNAME\tCREATED\tSIZE")
	for _, o := range orphans {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", dash(o.SandboxID), dash(o.ID), dash(o.Name), o.Created.Local().Format(time.DateTime),
			units.HumanSize(float64(o.Bytes)))
	}
	return tw.Flush()
}

type snapshotsPruneOptions struct {
	OlderThan time.Duration
	Yes       bool
	Now       func() time.Time
}

func newSnapshotsPruneCmd(f *factory, runF func(context.Context, *snapshotsPruneOptions) error) *cobra.Command {
	o := &snapshotsPruneOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete orphaned snapshots (of sandboxes that no longer exist): images, archives and records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.OlderThan < 0 {
				return exitWith(2, "--older-than: want a positive duration")
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *snapshotsPruneOptions) error { return runSnapshotsPrune(ctx, f, o) })
		},
	}
	cmd.Flags().DurationVar(&o.OlderThan, "older-than", 0, "only snapshots older than this (e.g. 168h)")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func runSnapshotsPrune(ctx context.Context, f *factory, o *snapshotsPruneOptions) error {
	layer, sup, err := f.Actions(ctx)
	if err != nil {
		return err
	}
	orphans, err := layer.OrphanSnapshots(ctx, connected(sup))
	if err != nil {
		return err
	}
	var pick []action.Orphan
	var bytes int64
	for _, s := range orphans {
		if o.OlderThan == 0 || o.Now().Sub(s.Created) >= o.OlderThan {
			pick = append(pick, s)
			bytes += s.Bytes
		}
	}
	if len(pick) == 0 {
		fmt.Fprintln(f.Out, "no orphaned snapshots to prune")
		return nil
	}
	if err := orphanTable(f, pick); err != nil {
		return err
	}
	if err := confirmCount(f, fmt.Sprintf("prune %d orphaned snapshots (%s)", len(pick), units.HumanSize(float64(bytes))), len(pick), o.Yes); err != nil {
		return err
	}
	done, err := layer.PruneOrphans(ctx, action.Request{Confirmed: true}, pick, 0, o.Now())
	fmt.Fprintf(f.Out, "pruned %d orphaned snapshots\n", len(done))
	if err != nil {
		if isRefusal(err) {
			return exitWith(2, redact.Message(err.Error()))
		}
		return exitWith(1, redact.Message(err.Error()))
	}
	return nil
}

// confirmCount asks the operator to type the count, as bulk destructive actions are confirmed.
func confirmCount(f *factory, what string, n int, yes bool) error {
	if yes {
		return nil
	}
	if !f.IsTerminal() {
		return exitWith(2, what+" needs confirmation: run it in a terminal, or pass --yes")
	}
	fmt.Fprintf(f.ErrOut, "%s? Type %d to confirm: ", what, n)
	line, err := bufio.NewReader(f.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if strings.TrimSpace(line) != fmt.Sprint(n) {
		return exitWith(1, "not confirmed: nothing was changed")
	}
	return nil
}
