package cli

import (
	"errors"
	"io"
	"os"
)

// errTerminalGone ends the workbench whose terminal hung up.
var errTerminalGone = errors.New("the terminal is gone")

// terminalInput is the workbench's terminal as Bubble Tea reads it, telling gone when the
// terminal hangs up. A hung-up terminal reads as end of file (in raw mode nothing else does),
// and Bubble Tea would go on without input: the kernel's SIGHUP reaches only the terminal's
// session leader, so a workbench started by a script whose shell does not pass it on outlived
// its closed terminal or dropped SSH connection, holding the state file and its watches.
type terminalInput struct {
	*os.File
	gone func()
}

func (t terminalInput) Read(p []byte) (int, error) {
	n, err := t.File.Read(p)
	if errors.Is(err, io.EOF) {
		t.gone()
	}
	return n, err
}
