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
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/watch"
)

// The containment watch's commands: `alerts` is a collection (listed, acknowledged);
// `quarantine X` and `release X` are verb-first actions like snapshot and teardown.
func init() {
	registerCommand(func(f *factory) *cobra.Command { return newAlertsCmd(f, nil) })
	registerCommand(func(f *factory) *cobra.Command { return newContainCmd(f, "quarantine", nil) })
	registerCommand(func(f *factory) *cobra.Command { return newContainCmd(f, "release", nil) })
}

type alertsOptions struct {
	Output string
	Since  time.Duration // 0: every alert
	Ack    uint64        // acknowledge this alert ID instead of listing
	Open   bool
}

func newAlertsCmd(f *factory, runF func(context.Context, *alertsOptions) error) *cobra.Command {
	o := &alertsOptions{}
	cmd := &cobra.Command{
		Use:   "alerts",
		Short: "List containment alerts (a sandbox weakened while running, an exec into it), or acknowledge one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.Output, "table", "json", "yaml"); err != nil {
				return err
			}
			if o.Since < 0 {
				return exitWith(2, fmt.Sprintf("--since %s: want a positive duration", o.Since))
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *alertsOptions) error { return runAlerts(f, o) })
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	cmd.Flags().DurationVar(&o.Since, "since", 0, "only alerts raised within this long (e.g. 1h)")
	cmd.Flags().Uint64Var(&o.Ack, "ack", 0, "acknowledge the alert with this ID (journaled with the operator)")
	cmd.Flags().BoolVar(&o.Open, "open", false, "only alerts not acknowledged")
	return cmd
}

func runAlerts(f *factory, o *alertsOptions) error {
	db, err := f.State()
	if err != nil {
		return err
	}
	if o.Ack != 0 {
		a, err := watch.Ack(db, o.Ack, f.Identity(), nil, nil)
		if errors.Is(err, state.ErrNoAlert) {
			return exitWith(2, err.Error())
		}
		if err != nil {
			return err
		}
		return writeAlerts(f, o.Output, []state.Alert{a})
	}
	q := state.AlertQuery{Open: o.Open}
	if o.Since > 0 {
		q.Since = time.Now().Add(-o.Since)
	}
	as, err := db.Alerts(q)
	if err != nil {
		return err
	}
	return writeAlerts(f, o.Output, as)
}

func writeAlerts(f *factory, output string, as []state.Alert) error {
	if as == nil {
		as = []state.Alert{}
	}
	switch output {
	case "json", "yaml":
		return writeData(f.Out, output, as)
	}
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tSEVERITY\tKIND\tSANDBOX\tSUMMARY\tACK")
	for _, a := range as {
		ack := "-"
		if a.Ack != nil {
			ack = a.Ack.Operator
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Time.Local().Format("2006-01-02 15:04:05"), strings.ToUpper(a.Severity.String()),
			a.Kind, redact.Cell(a.SandboxID), redact.Cell(a.Summary), redact.Cell(ack))
	}
	return tw.Flush()
}

type containOptions struct {
	Verb    string // quarantine | release
	Sandbox string
	Yes     bool
	Output  string
}

// newContainCmd builds `quarantine <sandbox>` or `release <sandbox>`.
func newContainCmd(f *factory, verb string, runF func(context.Context, *containOptions) error) *cobra.Command {
	o := &containOptions{Verb: verb}
	short := "Cut a sandbox off from everything outside itself; members keep running and keep their files"
	if verb == "release" {
		short = "Undo a quarantine: restore exactly the networks, aliases, addresses and NIC options it changed"
	}
	cmd := &cobra.Command{
		Use:   verb + " <sandbox>",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Sandbox = args[0]
			if err := checkOutput(o.Output, "table", "json"); err != nil {
				return err
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *containOptions) error { return runContain(ctx, f, o) })
		},
	}
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table or json")
	return cmd
}

func runContain(ctx context.Context, f *factory, o *containOptions) error {
	layer, sb, err := f.actOn(ctx, o.Sandbox)
	if err != nil {
		return err
	}
	if err := confirmByName(f, o.Verb, []string{sb.Name}, o.Yes); err != nil {
		return err
	}
	req := action.Request{SandboxID: sb.ID, Confirmed: true}
	verb := "quarantined"
	if o.Verb == "release" {
		err, verb = layer.Release(ctx, req), "released"
	} else {
		err = layer.Quarantine(ctx, req)
	}
	if errors.Is(err, action.ErrQuarantine) {
		return exitWith(2, redact.Message(err.Error()))
	}
	return reportMany(f, o.Output, verb, []string{sb.ID}, []error{err})
}
