package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/state"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func init() { registerCommand(newVersionCmd) }

// version has no arguments or flags to parse: no runF seam.

func newVersionCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print rangekeeper's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			_, err := fmt.Fprintf(f.Out, "rangekeeper %s (%s, %s/%s, state schema %d)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, state.SchemaVersion)
			return err
		},
	}
}
