package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/state"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newTimelineCmd(f, nil) }) }

type timelineOptions struct {
	Sandbox string
	Output  string
	Since   string
	Sources []string
	Limit   int
	Raw     bool
}

func newTimelineCmd(f *factory, runF func(context.Context, *timelineOptions) error) *cobra.Command {
	o := &timelineOptions{}
	cmd := &cobra.Command{
		Use:   "timeline <sandbox>",
		Short: "What happened to a sandbox, oldest first: engine events recorded while the workbench ran, the journal, probes, posture changes, recording gaps and the agent's commands",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.Output, "table", "json", "yaml"); err != nil {
				return err
			}
			if _, err := parseSince(o.Since, time.Now()); err != nil {
				return exitWith(2, err.Error())
			}
			for _, s := range o.Sources {
				if !validSource(s) {
					return exitWith(2, fmt.Sprintf("--source %q: want one of %s", s, strings.Join(timelineSources, ", ")))
				}
			}
			if o.Limit < 0 {
				return exitWith(2, fmt.Sprintf("--limit %d: want 0 (all) or more", o.Limit))
			}
			o.Sandbox = args[0]
			return runOr(cmd, o, runF, func(ctx context.Context, o *timelineOptions) error { return runTimeline(ctx, f, o) })
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	cmd.Flags().StringVar(&o.Since, "since", "", "only entries newer than a duration ago (1h) or a time (RFC 3339)")
	cmd.Flags().StringSliceVar(&o.Sources, "source", nil, "only these sources: "+strings.Join(timelineSources, ","))
	cmd.Flags().IntVarP(&o.Limit, "limit", "n", 0, "only the newest N entries")
	cmd.Flags().BoolVar(&o.Raw, "raw", false, "print members and details as recorded, control sequences included (table output)")
	return cmd
}

var timelineSources = []string{state.SourceBackend, state.SourceJournal, state.SourceProbe, state.SourcePosture, state.SourceRangekeeper, sourceAgent}

func validSource(s string) bool {
	for _, v := range timelineSources {
		if v == s {
			return true
		}
	}
	return false
}

// timelineID resolves the argument: a full sandbox ID is taken as it is (the sandbox may be gone
// — its timeline is not), anything else is resolved against the live fleet. The sandbox is what
// links it to the agent's commands: from the fleet, or what the ID alone says.
func timelineID(ctx context.Context, f *factory, arg string) (backends.Sandbox, error) {
	if strings.Contains(arg, ":") && strings.Contains(arg, "/") {
		return sandboxFromID(arg), nil
	}
	sup, err := f.ReadySupervisor(ctx, 10*time.Second)
	if err != nil {
		return backends.Sandbox{}, err
	}
	sb, err := action.ResolveSandbox(sup.Fleet(), arg)
	if err != nil {
		return backends.Sandbox{}, exitWith(2, err.Error()+" (a sandbox that is gone is named by its full ID)")
	}
	return sb, nil
}

// wantSource reports whether --source lets entries of this source through.
func wantSource(sources []string, s string) bool {
	if len(sources) == 0 {
		return true
	}
	for _, v := range sources {
		if v == s {
			return true
		}
	}
	return false
}

func runTimeline(ctx context.Context, f *factory, o *timelineOptions) error {
	sb, err := timelineID(ctx, f, o.Sandbox)
	if err != nil {
		return err
	}
	id := sb.ID
	db, err := f.State()
	if err != nil {
		return err
	}
	since, _ := parseSince(o.Since, time.Now())
	es, err := db.Timeline(state.TimelineQuery{SandboxID: id, Since: since})
	if err != nil {
		return err
	}
	if len(o.Sources) > 0 {
		keep := es[:0]
		for _, e := range es {
			if wantSource(o.Sources, e.Source) {
				keep = append(keep, e)
			}
		}
		es = keep
	}
	if wantSource(o.Sources, sourceAgent) {
		es = mergeByTime(es, agentEntries(ctx, f.evalsOrNone(ctx), sb, since))
	}
	if o.Limit > 0 && len(es) > o.Limit {
		es = es[len(es)-o.Limit:]
	}
	if es == nil {
		es = []state.TimelineEntry{}
	}
	switch o.Output {
	case "json", "yaml":
		return writeData(f.Out, o.Output, map[string]any{"sandbox": id, "entries": es})
	}
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSOURCE\tKIND\tMEMBER\tDETAIL")
	for _, e := range es {
		member, detail := dash(e.Member), detailOf(e)
		if !o.Raw {
			// Recorded from a sandbox (its members' names, exit messages): shown escaped, one
			// row each (a newline cannot fake a row).
			member, detail = redact.Cell(member), redact.Line(detail, redact.MaxMessage)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05.000"), e.Source, e.Kind, member, detail)
	}
	return tw.Flush()
}

// detailOf is the detail with the attributes the detail does not already say.
func detailOf(e state.TimelineEntry) string {
	d := e.Detail
	var keys []string
	for k := range e.Attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.Contains(d, e.Attrs[k]) {
			d += fmt.Sprintf(" %s=%s", k, e.Attrs[k])
		}
	}
	if e.Actor != "" && !strings.Contains(d, e.Actor) {
		d += " by " + e.Actor
	}
	return strings.TrimSpace(d)
}
