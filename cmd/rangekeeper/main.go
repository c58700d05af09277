// Command rangekeeper is the terminal workbench for operators of AI cyber-evaluation ranges.

// The runtime would re-read the cgroup's CPU limit every second to adjust GOMAXPROCS: a wake-up
// a second for an interactive tool that idles most of its life (issue 18's idle CPU). The
// limit in force at start is still honoured.
//
//go:debug updatemaxprocs=0
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/rangekeeper/rangekeeper/internal/heapcap"
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

func main() {
	// compose-go logs interpolation warnings through logrus; they would corrupt the TUI and
	// duplicate what lint reports itself, so the library logger is silenced for every command.
	logrus.SetOutput(io.Discard)
	heapcap.Start(heapcap.Default)
	if code, routed := runRemote(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); routed {
		os.Exit(code) // a daemon runs: the command went through its socket
	}
	f := newFactory(os.Stdin, os.Stdout, os.Stderr)
	root := newRootCmd(f)
	err := root.Execute()
	f.closeAll()
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, "rangekeeper:", redact.Message(ee.msg))
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "rangekeeper:", redact.Message(err.Error()))
		os.Exit(2)
	}
}

// exitError carries a specific exit status (e.g. lint's 1 for findings) out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

// exitWith returns an error that makes main exit with code, printing msg if non-empty.
func exitWith(code int, msg string) error { return &exitError{code: code, msg: msg} }
