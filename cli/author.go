package cli

import (
	"context"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/tui"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newAuthorCmd(f, nil) }) }

type authorOptions struct {
	Path   string
	Engine string
}

func newAuthorCmd(f *factory, runF func(context.Context, *authorOptions) error) *cobra.Command {
	o := &authorOptions{}
	cmd := &cobra.Command{
		Use:   "author [FILE]",
		Short: "Write a hardened sandbox spec with inline warnings, or fix an existing one",
		Long: `Open the guided spec editor. Without FILE it starts a new Compose / agent-env / Proxmox
spec from hardened defaults; with FILE it shows the file's findings against its own lines and
applies fixes without losing comments. Drafts are kept in the state file; a file is written only
on the save key (w) and never overwritten without confirmation.`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Path = args[0]
			}
			return runOr(cmd, o, runF, func(ctx context.Context, o *authorOptions) error { return runAuthor(ctx, f, o) })
		},
	}
	cmd.Flags().StringVar(&o.Engine, "engine-version", "", "Docker Engine version the spec runs on (enables CMP-N06)")
	return cmd
}

func runAuthor(ctx context.Context, f *factory, o *authorOptions) error {
	if !f.IsTerminal() {
		return exitWith(2, "author needs a terminal; use `rangekeeper lint` in scripts")
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	km, err := tui.Keys(cfg.Keys)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	opts := tui.AuthorOptions{Path: o.Path, EngineVersion: o.Engine, Keys: km}
	if db, err := f.State(); err == nil {
		opts.Drafts = db
	} else {
		fmt.Fprintln(f.ErrOut, "rangekeeper: drafts will not be kept:", err)
	}
	_, opts.NoColor = os.LookupEnv("NO_COLOR")
	_, err = tea.NewProgram(tui.Author(opts), tea.WithContext(ctx), tea.WithInput(f.In), tea.WithOutput(f.Out)).Run()
	return err
}
