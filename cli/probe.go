package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newProbeCmd(f, nil) }) }

type probeOptions struct {
	Sandboxes []string
	Output    string
	Member    string
	Versions  verdict.Versions
	Timeout   time.Duration
}

func newProbeCmd(f *factory, runF func(context.Context, *probeOptions) error) *cobra.Command {
	o := &probeOptions{}
	cmd := &cobra.Command{
		Use:   "probe SANDBOX...",
		Short: "Run the non-destructive escape probe inside sandboxes and give a verdict per escape class",
		Long: `Copy the static rangekeeper-probe into a sandbox member, verify it by SHA-256, run it, remove it,
and merge its report with the backend's live posture into a verdict per SandboxEscapeBench class.
The probe only reads, never exploits, and opens sockets only to the targets in the config's
probe: section. Results are kept in the state file's probe history.

SANDBOX is a sandbox ID (docker:default/<project>) or a name (the compose project).
Exit status: 0 nothing CRITICAL, 1 a class exposed at CRITICAL, 2 bad input or backend error,
3 a sandbox could not be probed (and nothing CRITICAL).`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true, // exit statuses carry meaning; usage only for flag errors
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Sandboxes = args
			if out := strings.ToLower(o.Output); out != "text" && !isData(out) {
				return exitWith(2, fmt.Sprintf("unknown --output %q (want text, json or yaml)", o.Output))
			}
			o.Output = strings.ToLower(o.Output)
			return runOr(cmd, o, runF, func(ctx context.Context, o *probeOptions) error { return runProbeCmd(ctx, f, o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.Output, "output", "o", "text", "output: text, json or yaml")
	fl.StringVar(&o.Member, "member", "", "member (service, container) to probe (default: Inspect's default)")
	fl.StringVar(&o.Versions.Runc, "runc-version", "", "host runc version (Docker: read from the engine when empty)")
	fl.StringVar(&o.Versions.Kernel, "kernel-version", "", "host kernel release (default: what the probe sees)")
	fl.StringVar(&o.Versions.CRIO, "crio-version", "", "CRI-O version of the node")
	fl.StringVar(&o.Versions.Kubectl, "kubectl-version", "", "kubectl version the harness copies files with")
	fl.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "per-sandbox timeout")
	return cmd
}

// probeOutcome is one sandbox's result in the command's output.
type probeOutcome struct {
	Report   probe.Report   `json:"report"`
	Previous *time.Time     `json:"previous,omitempty"`
	Changes  []probe.Change `json:"changes,omitempty"`
	Error    string         `json:"error,omitempty"`
}

func runProbeCmd(ctx context.Context, f *factory, o *probeOptions) error {
	if _, _, err := probe.Binary(); err != nil {
		return exitWith(2, err.Error())
	}
	db, err := f.State()
	if err != nil {
		return exitWith(2, err.Error())
	}
	layer, _, err := f.Actions(ctx)
	if err != nil {
		return exitWith(2, err.Error())
	}
	var ids []string
	for _, a := range o.Sandboxes {
		sb, err := layer.Resolve(a)
		if err != nil {
			return exitWith(2, err.Error())
		}
		ids = append(ids, sb.ID)
	}
	var results []probeOutcome
	for _, id := range ids {
		var oc probeOutcome
		prev, herr := probe.History(db, id, 1)
		rep, err := layer.Probe(ctx, action.Request{SandboxID: id}, probe.Request{Member: o.Member, Versions: o.Versions, Timeout: o.Timeout})
		oc.Report = rep
		if herr == nil && len(prev) == 1 && rep.Probed() {
			t := prev[0].Time
			oc.Previous, oc.Changes = &t, probe.Diff(prev[0], rep)
		}
		if err != nil {
			oc.Error = err.Error()
		}
		results = append(results, oc)
	}
	if isData(o.Output) {
		if err := writeData(f.Out, o.Output, results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			writeProbeText(f.Out, r)
		}
	}
	return probeExit(results)
}

// probeExit: 1 when a class is exposed at CRITICAL, else 3 when a sandbox went unprobed, else 2
// on other errors.
func probeExit(results []probeOutcome) error {
	var critical, unprobed, failed []string
	for _, r := range results {
		switch {
		case r.Report.Critical():
			critical = append(critical, r.Report.SandboxID)
		case r.Report.Result.CouldNotProbe != "":
			unprobed = append(unprobed, r.Report.SandboxID)
		case r.Error != "":
			failed = append(failed, r.Report.SandboxID+": "+r.Error)
		}
	}
	switch {
	case len(critical) > 0:
		return exitWith(1, fmt.Sprintf("exposed at CRITICAL: %s", strings.Join(critical, ", ")))
	case len(failed) > 0:
		return exitWith(2, strings.Join(failed, "; "))
	case len(unprobed) > 0:
		return exitWith(3, fmt.Sprintf("could not probe: %s", strings.Join(unprobed, ", ")))
	}
	return nil
}

func writeProbeText(w io.Writer, r probeOutcome) {
	rep := r.Report
	fmt.Fprintf(w, "%s", rep.SandboxID)
	if rep.Member != "" {
		fmt.Fprintf(w, " (%s)", rep.Member)
	}
	fmt.Fprintln(w)
	if r.Error != "" && rep.Probed() {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
	}
	if rep.Result.CouldNotProbe != "" || rep.Verdicts.Classes == nil {
		why := rep.Result.CouldNotProbe
		if why == "" {
			why = "could not probe: " + r.Error
		}
		fmt.Fprintf(w, "  %s\n\n", why)
		return
	}
	fmt.Fprintf(w, "  %s\n", rep.Summary())
	if r.Previous != nil {
		fmt.Fprintf(w, "  previous run %s: %d change(s)\n", r.Previous.UTC().Format(time.RFC3339), len(r.Changes))
		for _, c := range r.Changes {
			fmt.Fprintf(w, "    %s\n", c.Description)
		}
	}
	for _, v := range rep.Verdicts.Classes {
		if v.Status == verdict.Mitigated || v.Status == verdict.NotApplicable {
			continue
		}
		sev := ""
		if v.Severity > catalog.SeverityNone {
			sev = strings.ToUpper(v.Severity.String())
		}
		ev := v.Note
		if len(v.Evidence) > 0 {
			ev = v.Evidence[0].Check + " " + v.Evidence[0].Value
		}
		fmt.Fprintf(w, "  %-11s %-24s %-9s %-8s %s\n", v.Class, v.Name, v.Status, sev, ev)
	}
	fmt.Fprintln(w)
}
