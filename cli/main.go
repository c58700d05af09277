// Package cli is rangekeeper's command line: one cobra command per file, each an options struct
// and a run function whose dependencies come from the factory (the GitHub CLI's shape), so flags
// and arguments are tested without an engine. The binary's main only calls Main.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/rangekeeper/rangekeeper/internal/heapcap"
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

// Main runs the command line args (without the program name) and returns the exit status.
func Main(args []string, stdin, stdout, stderr *os.File) int {
	// compose-go logs interpolation warnings through logrus; they would corrupt the TUI and
	// duplicate what lint reports itself, so the library logger is silenced for every command.
	logrus.SetOutput(io.Discard)
	heapcap.Start(heapcap.Default)
	if code, routed := runRemote(args, stdin, stdout, stderr); routed {
		return code // a daemon runs: the command went through its socket
	}
	f := newFactory(stdin, stdout, stderr)
	root := newRootCmd(f)
	root.SetArgs(args)
	err := root.Execute()
	f.closeAll()
	return exitStatus(err, stderr)
}

// exitStatus is a command's exit status, its error (if any) told on stderr, redacted.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "rangekeeper:", redact.Message(ee.msg))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "rangekeeper:", redact.Message(err.Error()))
	return 2
}

// exitError carries a specific exit status (e.g. lint's 1 for findings) out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

// exitWith returns an error that makes Main exit with code, printing msg if non-empty.
func exitWith(code int, msg string) error { return &exitError{code: code, msg: msg} }
