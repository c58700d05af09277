package daemon

import (
	"io"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/rangekeeper/rangekeeper/tui"
)

// Terminal is a client's terminal, as a transport relays it to a session's program.
type Terminal struct {
	In         io.Reader // the client's keys
	Out        io.Writer // to the client; frames are bounded per session (FrameWriter)
	Env        []string  // TERM, COLORTERM, NO_COLOR…: the colour profile
	Cols, Rows int
	Frames     int // frames queued for a client that does not read (0: 8)
	FPS        int // the renderer's cap (0: 60)
}

// Screen is a session's workbench program on a relayed terminal (the socket's attached
// workbench; SSH sessions get theirs from wish's middleware).
type Screen struct {
	hs  *Session
	p   *tea.Program
	out *FrameWriter
}

// NewScreen builds the workbench of session hs on t.
func (d *Daemon) NewScreen(hs *Session, t Terminal) *Screen {
	if t.Frames == 0 {
		t.Frames = 8
	}
	if t.FPS == 0 {
		t.FPS = 60
	}
	out := NewFrameWriter(t.Out, t.Frames)
	p := tea.NewProgram(d.Model(hs), tea.WithInput(t.In), tea.WithOutput(out), tea.WithFPS(t.FPS),
		tea.WithEnvironment(t.Env), tea.WithColorProfile(colorprofile.Env(t.Env)),
		tea.WithWindowSize(t.Cols, t.Rows), tea.WithContext(d.ctx), tui.InputFirst())
	out.OnResume = func() { go p.Send(tea.ClearScreen()) }
	return &Screen{hs: hs, p: p, out: out}
}

// Run shows the fleet until the program quits (the operator, Quit, the daemon's end).
func (s *Screen) Run() error {
	defer s.out.Close()
	s.hs.Attach(s.p)
	_, err := s.p.Run()
	return err
}

// Resize tells the program the client's window changed.
func (s *Screen) Resize(cols, rows int) { s.p.Send(tea.WindowSizeMsg{Width: cols, Height: rows}) }

// Quit ends the program (its client went away).
func (s *Screen) Quit() { s.p.Quit() }
