package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// runOr is the runF seam of every command (the cli/cli mould): flags and arguments are parsed
// and checked into o by the command, then runF receives o when a test supplies one, else run
// does the work. Tests of argument and flag handling thereby need no engine.
func runOr[O any](cmd *cobra.Command, o O, runF, run func(context.Context, O) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if runF != nil {
		return runF(ctx, o)
	}
	return run(ctx, o)
}
