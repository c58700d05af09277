package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newLsCmd(f, nil) }) }

type lsOptions struct {
	Output  string
	Backend string
	Wait    time.Duration
	Now     func() time.Time
}

type lsResult struct {
	Sandboxes []lsSandbox         `json:"sandboxes"`
	Backends  []supervisor.Health `json:"backends"`
}

func newLsCmd(f *factory, runF func(context.Context, *lsOptions) error) *cobra.Command {
	opts := &lsOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List live sandboxes across every configured backend",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(opts.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			return runOr(cmd, opts, runF, func(ctx context.Context, o *lsOptions) error {
				f.onlyBackend = o.Backend // build and wait for the named backends only (app.Options.Only)
				if o.Output == "json" {
					s, err := f.Supervisor()
					if err != nil {
						return err
					}
					return streamLsJSON(ctx, f, s, o)
				}
				s, err := f.ReadySupervisor(ctx, o.Wait)
				if err != nil {
					return err
				}
				return runLs(ctx, f, s, o)
			})
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "table", "table, json or yaml")
	cmd.Flags().StringVar(&opts.Backend, "backend", "", "only this backend kind (docker, k8s, pve) or name (docker:default)")
	cmd.Flags().DurationVar(&opts.Wait, "wait", 5*time.Second, "how long to wait for slow backends")
	return cmd
}

func runLs(ctx context.Context, f *factory, s *supervisor.Supervisor, opts *lsOptions) error {
	res := lsResult{Sandboxes: []lsSandbox{}, Backends: s.Health()}
	w := f.evalsOrNone(ctx)
	for _, sb := range s.Fleet() {
		if opts.Backend != "" && string(sb.Backend) != opts.Backend && sb.Endpoint != opts.Backend {
			continue
		}
		res.Sandboxes = append(res.Sandboxes, lsSandbox{Sandbox: sb, Eval: linkOf(w, sb)})
	}
	if isData(opts.Output) {
		return writeData(f.Out, opts.Output, res)
	}
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tSANDBOX\tTASK\tEVAL\tSAMPLE\tSTATUS\tMEMBERS\tAGE\tSEV\tID")
	for _, row := range res.Sandboxes {
		sb := row.Sandbox
		running := 0
		for _, m := range sb.Members {
			if m.Running {
				running++
			}
		}
		sev := "-"
		if w := sb.WorstSeverity(); w > backends.SeverityNone {
			sev = w.String()
		}
		if sb.PosturePending != "" {
			sev += " (pending)"
		}
		name := sb.Name
		if !sb.Actionable {
			name += " (not a sandbox)"
		}
		if sb.Simulated {
			name += " (SIMULATED)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", sb.Backend, dash(name), dash(sb.Task), evalCell(row.Eval),
			sampleCell(row.Eval), sb.Status, running, len(sb.Members),
			sandbox.Age(opts.Now(), sb.Created), sev, dash(sb.ID))
	}
	return tw.Flush()
}

// dash makes text one safe table cell: "-" when empty, else redacted, control characters
// escaped (no fake rows, no terminal injection) and bounded.
func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return redact.Cell(s)
}
