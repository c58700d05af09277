package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/ttyshell"
)

func init() { registerCommand(func(f *factory) *cobra.Command { return newShellCmd(f, nil) }) }

type shellOptions struct {
	Sandbox string
	Member  string
	User    string
	Shell   []string
}

func newShellCmd(f *factory, runF func(context.Context, *shellOptions) error) *cobra.Command {
	o := &shellOptions{}
	cmd := &cobra.Command{
		Use:   "shell <sandbox> [--member M] [--user U] [-- shell args...]",
		Short: "Open an interactive shell in a sandbox member (bash -l, else sh; journaled, never the keystrokes)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash > 1 || (dash < 0 && len(args) > 1) {
				return exitWith(2, "usage: rangekeeper shell <sandbox> [--member M] [--user U] [-- shell args...]")
			}
			o.Sandbox, o.Shell = args[0], args[1:]
			return runOr(cmd, o, runF, func(ctx context.Context, o *shellOptions) error { return runShell(ctx, f, o) })
		},
	}
	cmd.Flags().StringVar(&o.Member, "member", "", "member (service, container name or ID); default: Inspect's default service")
	cmd.Flags().StringVar(&o.User, "user", "", "run the shell as this user")
	return cmd
}

func runShell(ctx context.Context, f *factory, o *shellOptions) error {
	layer, sb, err := f.actOn(ctx, o.Sandbox)
	if err != nil {
		return err
	}
	c := &ttyshell.Command{Ctx: ctx, Request: backends.ShellRequest{Member: o.Member, User: o.User, Cmd: o.Shell},
		Open: func(ctx context.Context, sr backends.ShellRequest) (backends.ShellResult, error) {
			return layer.Shell(ctx, action.Request{SandboxID: sb.ID}, sr)
		}}
	c.SetStdin(f.In)
	c.SetStdout(f.Out)
	if err := c.Run(); err != nil {
		if errors.Is(err, backends.ErrNotFound) || isRefusal(err) { // refused: exit 2 like every refusal
			return exitWith(2, err.Error())
		}
		return err
	}
	if c.Result.ExitCode != 0 {
		return exitWith(c.Result.ExitCode, fmt.Sprintf("shell in %s exited %d", c.Result.Member, c.Result.ExitCode))
	}
	return nil
}
