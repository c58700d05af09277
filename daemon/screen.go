package daemon

import (
	"context"
	"io"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/rangekeeper/rangekeeper/tui"
)

// Terminal is a client's terminal, as a transport relays it to a session's program.
type Terminal struct {
	In  io.Reader // the client's keys
	Out io.Writer // to the client; frames are bounded per session (FrameWriter)
	// Raw, when set, is the client's stream as a shell writes it (the SSH channel without the
	// emulated PTY's newline translation, which would corrupt a real TTY's output); nil: Out.
	Raw io.Writer
	// Gone, when set, is closed once the client has gone away; nil: once In ends. (An SSH
	// client may close its input and stay, watching; a socket's client that stops sending is
	// gone.) The program ends then, and so does a shell it opened.
	Gone       <-chan struct{}
	Env        []string // TERM, COLORTERM, NO_COLOR…: the colour profile
	Cols, Rows int
	Frames     int // frames queued for a client that does not read (0: 8)
	FPS        int // the renderer's cap (0: 60)
}

// Screen is a session's workbench program on a relayed terminal (an SSH session's, the
// socket's attached workbench).
type Screen struct {
	hs   *Session
	p    *tea.Program
	con  *console
	stop context.CancelFunc
}

// NewScreen builds the workbench of session hs on t.
func (d *Daemon) NewScreen(hs *Session, t Terminal) (*Screen, error) {
	if t.Frames == 0 {
		t.Frames = 8
	}
	if t.FPS == 0 {
		t.FPS = 60
	}
	con, err := newConsole(t)
	if err != nil {
		return nil, err
	}
	// The program ends when the client has gone (Terminal.Gone). Its input cannot tell it: the
	// pipe turns a transport's error into a plain end of input, which Bubble Tea reads past,
	// and Quit does nothing to a program not yet running.
	ctx, stop := context.WithCancel(d.ctx)
	go func() {
		select {
		case <-con.gone:
			stop()
		case <-ctx.Done():
		}
	}()
	p := tea.NewProgram(d.Model(hs), tea.WithInput(con.in), tea.WithOutput(con), tea.WithFPS(t.FPS),
		tea.WithEnvironment(t.Env), tea.WithColorProfile(colorprofile.Env(t.Env)),
		tea.WithWindowSize(t.Cols, t.Rows), tea.WithContext(ctx), tui.InputFirst())
	con.frames.OnResume = func() { go p.Send(tea.ClearScreen()) }
	return &Screen{hs: hs, p: p, con: con, stop: stop}, nil
}

// Run shows the fleet until the program quits (the operator, Quit, the daemon's end).
func (s *Screen) Run() error {
	done := make(chan struct{})
	defer s.stop()
	defer s.con.close()
	defer close(done)
	go s.con.tellSizes(s.p, done)
	s.hs.Attach(s.p)
	_, err := s.p.Run()
	return err
}

// Resize tells the program, or the shell it handed the terminal to, that the client's window
// changed. It does not wait for either.
func (s *Screen) Resize(cols, rows int) { s.con.resize(cols, rows) }

// Quit ends the program (its client went away).
func (s *Screen) Quit() { s.p.Quit() }
