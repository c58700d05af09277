package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/state"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newJournalCmd(f, nil) }) }

type journalOptions struct {
	Output string
	Target string // a sandbox ID or name ("" for all)
	Limit  int
}

func newJournalCmd(f *factory, runF func(context.Context, *journalOptions) error) *cobra.Command {
	o := &journalOptions{}
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Show the action journal (every intent and outcome, oldest first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.Output, append([]string{"table"}, dataFormats...)...); err != nil {
				return err
			}
			if o.Limit < 0 {
				return exitWith(2, fmt.Sprintf("--limit %d: want 0 (all) or more", o.Limit))
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *journalOptions) error { return runJournal(f, o) })
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "table, json or yaml")
	cmd.Flags().StringVar(&o.Target, "target", "", "only entries for this sandbox ID")
	cmd.Flags().IntVarP(&o.Limit, "limit", "n", 0, "only the newest N entries")
	return cmd
}

func runJournal(f *factory, o *journalOptions) error {
	db, err := f.State()
	if err != nil {
		return err
	}
	entries, err := db.Journal(state.JournalQuery{Target: o.Target, Limit: o.Limit})
	if err != nil {
		return err
	}
	if isData(o.Output) {
		if entries == nil {
			entries = []state.Entry{}
		}
		return writeData(f.Out, o.Output, entries)
	}
	tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tOPERATOR\tACTION\tPHASE\tOUTCOME\tTARGET\tERROR")
	for _, e := range entries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.Time.Local().Format("2006-01-02 15:04:05"), who(e),
			e.Action, e.Phase, dash(e.Outcome), e.Target, e.Error)
	}
	return tw.Flush()
}

// who is the entry's operator, with the transport and key fingerprint when it came through a
// daemon ("alice (ssh SHA256:…)"); -o json has every identity field.
func who(e state.Entry) string {
	switch {
	case e.Transport == "" || e.Transport == "standalone":
		return e.Operator
	case e.Fingerprint != "":
		return e.Operator + " (" + e.Transport + " " + e.Fingerprint + ")"
	}
	return e.Operator + " (" + e.Transport + ")"
}
