package daemon

import (
	"io"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/ttyshell"
)

// console is a session's remote terminal as the daemon holds it, between the client and the
// session's program, and between the program and a shell the operator opens from it
// (ttyshell.Remote).
//
// The program reads the client's keys from a pipe, not from the transport: Bubble Tea can
// cancel a pending read only on a file, and it must, when it hands the terminal to a shell, or
// its read would take the shell's first key and, after the shell, the shell's last read would
// take the workbench's next one. The program's frames go through a FrameWriter, which drops
// them for a slow client; a shell's output instead goes straight to the client (Raw), in order
// after the frames already queued. Window changes go to the shell while it holds the
// terminal, and to the program (which, inside tea.Exec, takes them only once the shell ends).
// Nothing here is a terminal of the daemon's process: a pipe is no TTY, so neither Bubble Tea
// nor ttyshell puts anything in raw mode; the client's terminal is raw on the client's side.
type console struct {
	frames *FrameWriter
	raw    io.Writer
	in     *os.File // the program's input: the read end of the pipe the client's keys go to

	mu    sync.Mutex
	size  backends.TermSize
	shell chan backends.TermSize // while a shell holds the terminal, its window changes
	sized chan struct{}          // the program has a size to learn
	gone  <-chan struct{}        // closed once the client has gone away (Terminal.Gone)
}

func newConsole(t Terminal) (*console, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	raw := t.Raw
	if raw == nil {
		raw = t.Out
	}
	c := &console{frames: NewFrameWriter(t.Out, t.Frames), raw: raw, in: r,
		size: backends.TermSize{Width: uint(max(t.Cols, 0)), Height: uint(max(t.Rows, 0))}, sized: make(chan struct{}, 1),
		gone: t.Gone}
	inEnded := make(chan struct{})
	if c.gone == nil {
		c.gone = inEnded
	}
	go func() {
		// Ends with the transport (the client's EOF: the program reads it too), or once the
		// program is gone and the pipe's read end closed.
		io.Copy(w, t.In)
		w.Close()
		close(inEnded)
	}()
	return c, nil
}

// Write is the program's output: its frames.
func (c *console) Write(p []byte) (int, error) { return c.frames.Write(p) }

// resize records the client's window and passes it on: to the shell holding the terminal, if
// one does (the newest size replaces one it has not taken yet), and to the program.
func (c *console) resize(cols, rows int) {
	c.mu.Lock()
	c.size = backends.TermSize{Width: uint(max(cols, 0)), Height: uint(max(rows, 0))}
	if c.shell != nil {
		select {
		case <-c.shell:
		default:
		}
		c.shell <- c.size // cannot block: only this sends, under mu, into a buffer of one
	}
	c.mu.Unlock()
	select {
	case c.sized <- struct{}{}:
	default: // already due; it reads the newest size
	}
}

// tellSizes sends the program each window size it has not seen, until done. It is a goroutine
// of its own because the program takes no message while a shell runs (tea.Exec holds its
// event loop); the transport's relay must go on meanwhile.
func (c *console) tellSizes(p *tea.Program, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-c.sized:
			c.mu.Lock()
			s := c.size
			c.mu.Unlock()
			p.Send(tea.WindowSizeMsg{Width: int(s.Width), Height: int(s.Height)})
		}
	}
}

// HandOver implements ttyshell.Remote: it stops the frames once the queued ones reached the
// client and gives the shell the client's stream, its size and its window changes until Back.
func (c *console) HandOver() ttyshell.Handed {
	release := c.frames.Hold()
	ch := make(chan backends.TermSize, 1)
	c.mu.Lock()
	c.shell = ch
	size := c.size
	c.mu.Unlock()
	var once sync.Once
	return ttyshell.Handed{Out: c.raw, Size: size, Resize: ch, Gone: c.gone, Back: func() {
		once.Do(func() {
			c.mu.Lock()
			c.shell = nil
			close(ch)
			c.mu.Unlock()
			release()
		})
	}}
}

// close ends the frames and the program's input.
func (c *console) close() {
	c.frames.Close()
	c.in.Close()
}
