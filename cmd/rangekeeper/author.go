package main

import (
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/views/author"
)

func init() { registerCommand(newAuthorCmd) }

func newAuthorCmd(f *factory) *cobra.Command {
	var engine string
	cmd := &cobra.Command{
		Use:   "author [FILE]",
		Short: "Write a hardened sandbox spec with inline warnings, or fix an existing one",
		Long: `Open the guided spec editor. Without FILE it starts a new Compose / agent-env / Proxmox
spec from hardened defaults; with FILE it shows the file's findings against its own lines and
applies fixes without losing comments. Drafts are kept in the state file; a file is written only
on ctrl+s and never overwritten without confirmation.`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !f.IsTerminal() {
				return exitWith(2, "author needs a terminal; use `rangekeeper lint` in scripts")
			}
			opts := author.Options{}
			opts.Lint.EngineVersion = engine
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if db, err := f.State(); err == nil {
				opts.Drafts = db
			} else {
				fmt.Fprintln(f.ErrOut, "rangekeeper: drafts will not be kept:", err)
			}
			_, noColor := os.LookupEnv("NO_COLOR")
			opts.NoColor = noColor
			_, err := tea.NewProgram(author.New(opts), tea.WithInput(f.In), tea.WithOutput(f.Out)).Run()
			return err
		},
	}
	cmd.Flags().StringVar(&engine, "engine-version", "", "Docker Engine version the spec runs on (enables CMP-N06)")
	return cmd
}
