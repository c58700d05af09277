package cli

import (
	"github.com/spf13/cobra"
)

func newRootCmd(f *factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "rangekeeper",
		Short:         "Terminal workbench for AI cyber-evaluation ranges (Docker, Kubernetes, Proxmox)",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if attached, err := attachWorkbench(cmd.Context(), f); attached {
				return err
			}
			return runTUI(cmd.Context(), f)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.StatePath, "state", "", "state file (default $XDG_STATE_HOME/rangekeeper/state.db)")
	pf.StringVar(&f.ConfigPath, "config", "", "config file (default $XDG_CONFIG_HOME/rangekeeper/config.yaml)")
	pf.BoolVar(&f.ReadOnly, "read-only", false, "refuse every action that changes a sandbox")
	pf.BoolVar(&f.All, "all", false, "also list resources that are not sandboxes (never actionable)")
	pf.BoolVar(&f.Standalone, "standalone", false, "act directly even when `rangekeeper serve` runs (no daemon locks or roles)")
	for _, fn := range commandRegistry {
		root.AddCommand(fn(f))
	}
	return root
}
