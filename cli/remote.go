package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/term"

	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
	"github.com/rangekeeper/rangekeeper/state"
)

// configPath is the config file in use.
func configPath(f *factory) string {
	if f.ConfigPath != "" {
		return f.ConfigPath
	}
	return config.DefaultPath()
}

// globalValueFlags take a value as the next argument.
var globalValueFlags = map[string]bool{"--state": true, "--config": true}

// commandOf is the command word of a command line (the first argument that is not a global
// flag or its value); "" for the workbench.
func commandOf(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if globalValueFlags[a] {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return a
	}
	return ""
}

// flagValue is the value of a global flag in args ("" when absent).
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// runRemote sends the command line to a running daemon when it is one of the commands the
// daemon serves and --standalone is not given: the daemon's locks, roles and journal apply,
// acting for this user. routed is false when the command runs here.
func runRemote(args []string, in io.Reader, out, errOut io.Writer) (code int, routed bool) {
	for _, a := range args {
		if a == "--standalone" || a == "--standalone=true" || a == "--help" || a == "-h" {
			return 0, false
		}
	}
	cmd := commandOf(args)
	if !remoteCommands[cmd] {
		return 0, false
	}
	statePath, ok := flagValue(args, "--state")
	if !ok {
		statePath = state.DefaultPath()
	}
	sock := socketPath(statePath)
	if !sockapi.Available(sock) {
		return 0, false
	}
	if cmd == "revert" || cmd == "teardown" {
		var err error
		if args, err = confirmRemote(args, cmd, in, errOut); err != nil {
			var ee *exitError
			if errors.As(err, &ee) {
				fmt.Fprintln(errOut, "rangekeeper:", ee.msg)
				return ee.code, true
			}
			fmt.Fprintln(errOut, "rangekeeper:", err)
			return 2, true
		}
	}
	code, err := sockapi.NewClient(sock).Run(context.Background(), withoutState(args), out, errOut)
	var busy *sockapi.BusyError
	if errors.As(err, &busy) {
		fmt.Fprintln(errOut, "rangekeeper:", busy)
		return sockapi.ExitBusy, true
	}
	if err != nil {
		fmt.Fprintln(errOut, "rangekeeper:", err)
		return 2, true
	}
	return code, true
}

// confirmRemote asks here, in the operator's terminal, for the confirmation a destructive
// command needs (the daemon has no terminal to ask in), then passes --yes.
func confirmRemote(args []string, cmd string, in io.Reader, errOut io.Writer) ([]string, error) {
	var target string
	seen := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--yes" || a == "-y" || a == "--yes=true":
			return args, nil
		case globalValueFlags[a] || a == "-o" || a == "--output" || a == "--parallel":
			i++
		case strings.HasPrefix(a, "-"):
		case !seen && a == cmd:
			seen = true
		case seen && target == "":
			target = a
		}
	}
	fi, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(fi.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) || target == "" {
		return args, nil // the daemon refuses it, saying --yes is needed
	}
	fmt.Fprintf(errOut, "%s %s? Type the sandbox name to confirm: ", cmd, target)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if strings.TrimSpace(line) != target {
		return nil, exitWith(1, "not confirmed: nothing was changed")
	}
	return append(args, "--yes"), nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
