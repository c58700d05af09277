package cli

import (
	"fmt"
	"strings"
)

// servedReadOnly are the commands that change nothing: --read-only is already true of them, so
// the daemon accepts it there.
var servedReadOnly = map[string]bool{"ls": true, "journal": true, "evals": true}

// unservedFlag says why a global flag in a command line sent to the daemon's socket cannot
// apply there ("" when every flag can). The command would otherwise run on the daemon's own
// state, config and layer while the user believed their flag held.
func unservedFlag(args []string) string {
	for _, a := range args {
		if a == "--" { // what follows belongs to the command run in the sandbox (exec)
			break
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--state":
			return "--state cannot apply through the daemon: it acts on its own state file (the CLI uses --state only to find the daemon's socket, and does not send it)"
		case "--config":
			return "--config cannot apply through the daemon: it runs with its own config file; use --standalone to act with another config"
		case "--standalone":
			return "--standalone cannot apply through the daemon: the CLI never sends it; run the command without the daemon's socket"
		case "--read-only":
			if cmd := commandOf(args); !servedReadOnly[cmd] {
				return fmt.Sprintf("--read-only cannot apply to %s through the daemon: its read-only mode is the daemon's (config read_only); nothing was run", cmd)
			}
		}
	}
	return ""
}

// withoutState drops --state (and its value) from a command line the CLI sends to the
// daemon: it chose the socket, and the daemon acts on its own state file.
func withoutState(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--state" {
			i++
			continue
		}
		if strings.HasPrefix(a, "--state=") {
			continue
		}
		out = append(out, a)
	}
	return out
}
