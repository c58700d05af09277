package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/rangekeeper/rangekeeper/backends/ttyshell"
	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
)

// attachEnv is what of the environment the daemon's session needs to colour the terminal.
var attachEnv = []string{"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "LANG", "LC_ALL"}

// attachWorkbench opens the daemon's workbench in this terminal when `rangekeeper serve` runs on
// this state file: the local operator becomes one of the team's sessions — the daemon's fleet,
// its locks, roles and journal, as the local user over the socket. attached is false when no
// daemon answers (or --standalone, or --read-only, which the daemon's roles cannot express for
// the local user: both run the workbench here).
func attachWorkbench(ctx context.Context, f *factory) (attached bool, err error) {
	if f.Standalone || f.ReadOnly {
		return false, nil
	}
	sock := socketPath(f.statePath())
	if !sockapi.Available(sock) {
		return false, nil
	}
	in, _ := f.In.(*os.File)
	out, _ := f.Out.(*os.File)
	if in == nil || out == nil || !f.IsTerminal() {
		return true, fmt.Errorf("rangekeeper serve runs on %s: the workbench needs a terminal to attach to it (or pass --standalone)", sock)
	}
	cols, rows, err := term.GetSize(int(out.Fd()))
	if err != nil {
		cols, rows = 80, 24
	}
	req := sockapi.AttachRequest{Cols: cols, Rows: rows}
	for _, k := range attachEnv {
		if v, ok := os.LookupEnv(k); ok {
			req.Env = append(req.Env, k+"="+v)
		}
	}
	old, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return true, fmt.Errorf("terminal: %w", err)
	}
	defer term.Restore(int(in.Fd()), old)

	resize := make(chan [2]int, 1)
	defer ttyshell.WatchSize(int(out.Fd()), func(c, r int) {
		select {
		case resize <- [2]int{c, r}:
		default: // one pending size is enough: the next read takes the newest
		}
	})()
	screen := &attachedOut{w: out}
	err = sockapi.NewClient(sock).Attach(ctx, req, in, screen, resize)
	// The daemon's program restores the terminal as it ends; a session cut short (the daemon
	// stopped) leaves the alternate screen, a hidden cursor or mouse reporting on.
	if screen.on {
		io.WriteString(out, "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?25h\x1b[?1049l")
	}
	return true, err
}

// attachedOut writes the daemon's frames to the raw terminal. The daemon's renderer, whose
// output is not a terminal, moves down with a bare newline, as a terminal that maps newlines
// (ONLCR) expects; raw mode turned that mapping off, so it is done here. It also notes whether
// the output left the terminal on the alternate screen.
type attachedOut struct {
	w    io.Writer
	on   bool
	tail []byte // the last bytes of the previous write: a sequence may be split across two
	buf  []byte
}

func (a *attachedOut) Write(p []byte) (int, error) {
	seen := append(a.tail, p...)
	enter, leave := bytes.LastIndex(seen, []byte("\x1b[?1049h")), bytes.LastIndex(seen, []byte("\x1b[?1049l"))
	if enter >= 0 || leave >= 0 {
		a.on = enter > leave
	}
	a.tail = append(a.tail[:0], seen[max(0, len(seen)-7):]...)
	a.buf = onlcr(a.buf[:0], p)
	if _, err := a.w.Write(a.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// onlcr appends p to dst with every newline preceded by a carriage return.
func onlcr(dst, p []byte) []byte {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return append(dst, p...)
		}
		dst = append(append(dst, p[:i]...), '\r', '\n')
		p = p[i+1:]
	}
}
