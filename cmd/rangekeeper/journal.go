package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/state"
)

func init() { registerCommand(newJournalCmd) }

func newJournalCmd(f *factory) *cobra.Command {
	var output, target string
	var limit int
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Show the action journal (every intent and outcome, oldest first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "table", "json"); err != nil {
				return err
			}
			db, err := f.State()
			if err != nil {
				return err
			}
			entries, err := db.Journal(state.JournalQuery{Target: target, Limit: limit})
			if err != nil {
				return err
			}
			if output == "json" {
				if entries == nil {
					entries = []state.Entry{}
				}
				return writeJSON(f.Out, entries)
			}
			tw := tabwriter.NewWriter(f.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SEQ\tTIME\tOPERATOR\tACTION\tPHASE\tOUTCOME\tTARGET\tERROR")
			for _, e := range entries {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.Time.Local().Format("2006-01-02 15:04:05"), e.Operator,
					e.Action, e.Phase, dash(e.Outcome), e.Target, e.Error)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	cmd.Flags().StringVar(&target, "target", "", "only entries for this sandbox ID")
	cmd.Flags().IntVarP(&limit, "limit", "n", 0, "only the newest N entries")
	return cmd
}
