// Package ttyshell connects the operator's terminal to a sandbox shell: raw mode for the length
// of the session (so ctrl-c and every key reach the remote process), window-size changes
// forwarded as they happen, and the terminal restored exactly on the way out. Its Command is a
// Bubble Tea ExecCommand, so the workbench suspends itself around a shell; the CLI runs it too.
package ttyshell

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/muesli/cancelreader"
	"golang.org/x/term"

	"github.com/rangekeeper/rangekeeper/backends"
)

// fileDescriptor is what the terminal's files are read by for raw mode and sizes.
type fileDescriptor interface{ Fd() uintptr }

// Remote is a terminal a remote client holds (a team session's SSH channel or attached socket).
// The daemon gives it to the workbench as its output, and Bubble Tea hands that output to the
// shell (SetStdout). It is not this process's terminal: the shell puts nothing in raw mode (the
// client's own terminal is raw already, on the client's side) and watches no SIGWINCH (that
// signal is about the daemon's terminal); the size and its changes come from the client.
type Remote interface {
	// HandOver gives the terminal to a shell until the shell calls Handed.Back.
	HandOver() Handed
}

// Handed is a remote terminal while a shell holds it.
type Handed struct {
	// Out writes straight to the client, after everything the workbench drew, never dropped.
	Out io.Writer
	// Size is the client's window now; Resize delivers its changes until Back.
	Size   backends.TermSize
	Resize <-chan backends.TermSize
	// Gone is closed when the client has gone away: the shell is ended then, or an idle one
	// would hold the sandbox's lock with nobody at its keyboard.
	Gone <-chan struct{}
	// Back gives the terminal back to the workbench.
	Back func()
}

// Open runs a shell (the action layer's Shell, bound to a sandbox and a request).
type Open func(ctx context.Context, sr backends.ShellRequest) (backends.ShellResult, error)

// Command runs one shell session on the terminal given by SetStdin/SetStdout.
type Command struct {
	Ctx     context.Context
	Open    Open
	Request backends.ShellRequest // Member, User, Cmd

	stdin          io.Reader
	stdout, stderr io.Writer
	undo           []func() // what local changed on this process's terminal

	// Result and Err are the session's outcome once Run returned.
	Result backends.ShellResult
	Err    error
}

// SetStdin, SetStdout and SetStderr implement Bubble Tea's ExecCommand.
func (c *Command) SetStdin(r io.Reader)  { c.stdin = r }
func (c *Command) SetStdout(w io.Writer) { c.stdout = w }
func (c *Command) SetStderr(w io.Writer) { c.stderr = w }

// Run connects the terminal to the shell until it exits. The session's own error is kept in
// Err (Run returns it as well).
func (c *Command) Run() error {
	c.Result, c.Err = c.run()
	return c.Err
}

func (c *Command) run() (backends.ShellResult, error) {
	ctx := c.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	in, out := c.stdin, c.stdout
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	req := c.Request
	req.Stdout = out
	inFile, _ := in.(fileDescriptor) // an *os.File, or one wrapped (the workbench's input)
	if r, ok := out.(Remote); ok {
		h := r.HandOver()
		defer h.Back()
		req.Stdout, req.Size, req.Resize = h.Out, h.Size, h.Resize
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-h.Gone:
				cancel()
			case <-ctx.Done():
			}
		}()
	} else {
		defer c.restore()
		if err := c.local(&req, inFile, out); err != nil {
			return backends.ShellResult{}, err
		}
	}
	// The reader must stop when the shell ends, or it would keep the next key from whoever
	// reads the terminal after us (the workbench).
	if inFile != nil {
		src, own := in, (*os.File)(nil)
		if _, remote := out.(Remote); remote {
			// A session closes its input pipe when its program ends, which may be while the
			// backend's copy still sits in a Read of ours: read a duplicate only we close.
			if fd, err := syscall.Dup(int(inFile.Fd())); err == nil {
				own = os.NewFile(uintptr(fd), "shell input")
				src = own
			}
		}
		if cr, err := cancelreader.NewReader(src); err == nil {
			r := &stdinReader{cr: cr, own: own}
			req.Stdin = r
			defer r.stop()
		} else if own != nil {
			own.Close()
		}
	}
	if req.Stdin == nil {
		req.Stdin = in
	}
	res, err := c.Open(ctx, req)
	if errors.Is(err, cancelreader.ErrCanceled) {
		err = nil
	}
	return res, err
}

// local prepares this process's own terminal: raw mode on the input, the size of the output (or
// input) and its window changes. restore undoes it.
func (c *Command) local(req *backends.ShellRequest, inFile fileDescriptor, out io.Writer) error {
	outFile, _ := out.(fileDescriptor)
	if inFile != nil && term.IsTerminal(int(inFile.Fd())) {
		old, err := term.MakeRaw(int(inFile.Fd()))
		if err != nil {
			return err
		}
		c.undo = append(c.undo, func() { term.Restore(int(inFile.Fd()), old) })
	}
	sizeFd := -1
	switch {
	case outFile != nil && term.IsTerminal(int(outFile.Fd())):
		sizeFd = int(outFile.Fd())
	case inFile != nil && term.IsTerminal(int(inFile.Fd())):
		sizeFd = int(inFile.Fd())
	}
	req.Size = backends.TermSize{Width: 80, Height: 24}
	if sizeFd >= 0 {
		if w, h, err := term.GetSize(sizeFd); err == nil {
			req.Size = backends.TermSize{Width: uint(w), Height: uint(h)}
		}
		resize := make(chan backends.TermSize, 1)
		c.undo = append(c.undo, WatchSize(sizeFd, func(w, h int) {
			select {
			case resize <- backends.TermSize{Width: uint(w), Height: uint(h)}:
			default: // one pending size is enough; the newest wins next time
			}
		}))
		req.Resize = resize
	}
	return nil
}

// restore undoes local, the latest change first.
func (c *Command) restore() {
	for i := len(c.undo) - 1; i >= 0; i-- {
		c.undo[i]()
	}
	c.undo = nil
}

// stdinReader is the shell's end of the terminal: a cancel reader that is closed only once no
// Read is inside it. The backend copies it to the shell from a goroutine of its own that is still
// in a Read when the shell ends; closing the reader under that Read freed its epoll and pipe
// descriptors, the workbench's input reader (created next) got the same numbers, and the late
// Read took the operator's next key: the race detector caught it, the e2e test lost its q.
type stdinReader struct {
	cr     cancelreader.CancelReader
	own    *os.File     // a duplicate of the input it reads, closed with it; nil: none
	mu     sync.RWMutex // held shared by every Read, exclusively to close
	closed bool
}

func (r *stdinReader) Read(p []byte) (int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return 0, cancelreader.ErrCanceled
	}
	return r.cr.Read(p)
}

// stop cancels the Read in flight and every later one, and closes the reader as soon as the one
// in flight has returned (at once after Cancel); it does not wait for that itself.
func (r *stdinReader) stop() {
	r.cr.Cancel()
	go func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.closed = true
		_ = r.cr.Close()
		if r.own != nil {
			_ = r.own.Close()
		}
	}()
}

// WatchSize calls changed with the terminal's new size (of fd) at each window change (SIGWINCH),
// until the returned stop is called. changed runs on the watcher's goroutine: it must not block.
func WatchSize(fd int, changed func(w, h int)) (stop func()) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-winch:
				if w, h, err := term.GetSize(fd); err == nil {
					changed(w, h)
				}
			}
		}
	}()
	return func() {
		signal.Stop(winch)
		close(done)
	}
}
