// Package sshd serves the team daemon's workbench over SSH with wish: public-key
// authentication against the operators file only, a persistent ed25519 host key, one Bubble Tea
// program per session sized from its PTY, no forwarding, no exec or subsystems.
package sshd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/activeterm"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/operators"
)

// Options configure the SSH listener.
type Options struct {
	Addr        string        // "" : DefaultAddr (loopback)
	HostKeyPath string        // created (ed25519, 0600) when missing
	MaxSessions int           // 0: 32
	IdleTimeout time.Duration // 0: 30 min; a connection without input (keys, resizes) this long is closed
	// OutputFrames bounds the frames queued for one client; past it frames are dropped and the
	// screen is redrawn whole once the client reads again (0: 8).
	OutputFrames int
	// FPS caps each session's frame rate (0: DefaultFPS). The renderer flushes on this tick, so
	// a key waits up to 1/FPS for its frame; the ticker stops while nothing changes.
	FPS int
}

// DefaultFPS is an SSH session's frame cap: 60 keeps the renderer's wait for a key's frame
// under 17 ms of the 50 ms key-to-frame budget. Measured with 20 sessions on 2 cores
// (BenchmarkKeyToFrame20Sessions): p99 41–43 ms at 30, 27–42 at 60, no better at 90 or 120
// (the rest is the CPU the sessions' frames share). Idle sessions cost no ticks (Bubble Tea
// v2.2 parks an idle renderer), so the cap costs CPU only while frames change.
const DefaultFPS = 60

// DefaultAddr listens on loopback only: exposing the range is the operator's choice.
const DefaultAddr = "127.0.0.1:2222"

// extFingerprint carries the authenticating key's fingerprint in the connection's
// Permissions: x/crypto attaches to the connection the Permissions returned for the key that
// actually authenticated, whatever other keys the client offered first (CVE-2024-45337).
const extFingerprint = "rangekeeper-key-fp"

// Server is the SSH side of the daemon.
type Server struct {
	d      *daemon.Daemon
	opts   Options
	srv    *ssh.Server
	hostFP string
	// slots holds one token per admitted session: taking one is the session limit's check and
	// reservation in one step, so sessions racing in cannot exceed MaxSessions.
	slots chan struct{}
	// admitted, when set (tests), runs once a session holds its slot, before it joins the hub.
	admitted func()
}

// New builds the server (the host key is loaded or created now).
func New(d *daemon.Daemon, o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = 32
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 30 * time.Minute
	}
	if o.FPS == 0 {
		o.FPS = DefaultFPS
	}
	if o.OutputFrames == 0 {
		o.OutputFrames = 8
	}
	pemBytes, fp, err := HostKey(o.HostKeyPath)
	if err != nil {
		return nil, err
	}
	s := &Server{d: d, opts: o, hostFP: fp, slots: make(chan struct{}, o.MaxSessions)}
	s.srv, err = wish.NewServer(
		wish.WithAddress(o.Addr),
		wish.WithHostKeyPEM(pemBytes),
		wish.WithPublicKeyAuth(s.publicKey),
		// No wish.WithIdleTimeout: charm.land/ssh resets it on the server's writes too, so a
		// session watching a churning fleet never timed out. watchConn counts input only.
		wish.WithMiddleware(
			s.workbench,
			activeterm.Middleware(), // a PTY is required: no exec of commands
			s.gate,                  // runs first
		),
	)
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	// Forwarding of ports or X11 and subsystems (sftp) stay refused: their handlers are nil.
	s.srv.LocalPortForwardingCallback = nil
	s.srv.ReversePortForwardingCallback = nil
	s.srv.SubsystemHandlers = nil
	// Sessions are the only channel type; sessionChannel refuses agent forwarding (which
	// charm.land/ssh would accept) and reports input to the connection's idle watch.
	s.srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": s.sessionChannel}
	s.srv.ConnCallback = s.watchConn
	return s, nil
}

// HostKeyFingerprint is the host key's SHA256 fingerprint (printed at start).
func (s *Server) HostKeyFingerprint() string { return s.hostFP }

// Serve accepts connections on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	err := s.srv.Serve(l)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	return err
}

// Listen opens the configured address.
func (s *Server) Listen() (net.Listener, error) { return net.Listen("tcp", s.opts.Addr) }

// Shutdown stops accepting and closes every connection.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	s.srv.Close()
	return err
}

// publicKey admits keys of the operators file. It records the key's fingerprint only in the
// Permissions it returns; the session re-derives who it is from the key that authenticated.
func (s *Server) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	if _, ok := s.d.Operators().ByKey(key); !ok {
		return false
	}
	p := ctx.Permissions()
	if p.Extensions == nil {
		p.Extensions = map[string]string{}
	}
	p.Extensions[extFingerprint] = operators.Fingerprint(key)
	return true
}

// Identify is who an authenticated session is: the operator owning the key that authenticated
// (sess.PublicKey, from the connection's Permissions), cross-checked with the fingerprint the
// authentication recorded; never a value left by a public-key callback for a key merely offered.
func Identify(f *operators.File, sess ssh.Session) (action.Identity, operators.Role, error) {
	key := sess.PublicKey()
	if key == nil {
		return action.Identity{}, "", errors.New("no public key authenticated this session")
	}
	fp := operators.Fingerprint(key)
	if rec := sess.Permissions().Extensions[extFingerprint]; rec != fp {
		return action.Identity{}, "", fmt.Errorf("key mismatch: authenticated %s, recorded %q", fp, rec)
	}
	e, ok := f.ByKey(key)
	if !ok {
		return action.Identity{}, "", fmt.Errorf("key %s: %w", fp, operators.ErrUnknown)
	}
	src := ""
	if a := sess.RemoteAddr(); a != nil {
		src = a.String()
	}
	return action.Identity{Operator: e.Name, Transport: action.TransportSSH, Fingerprint: fp, Source: src}, e.Role, nil
}

type ctxKey struct{}

// gate refuses what is not the interactive workbench, identifies the operator and enforces
// the session limit; it registers the session with the daemon for its length.
func (s *Server) gate(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if sess.RawCommand() != "" || sess.Subsystem() != "" {
			wish.Fatalln(sess, "rangekeeper: only the interactive workbench is served (no commands, no subsystems)")
			return
		}
		who, role, err := Identify(s.d.Operators(), sess)
		if err != nil {
			wish.Fatalln(sess, "rangekeeper: refused:", err)
			return
		}
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }() // after Leave, below
		default:
			wish.Fatalf(sess, "rangekeeper: refused: %d sessions already (the maximum)\n", s.opts.MaxSessions)
			return
		}
		if s.admitted != nil {
			s.admitted()
		}
		hs := s.d.Hub().Join(who, role, func() { endConn(sess) })
		defer hs.Leave()
		sess.Context().SetValue(ctxKey{}, hs)
		next(sess)
	}
}

// workbench runs the session's own program over the daemon's shared fleet and layer, on the
// session's PTY (daemon.Screen: the program reads the keys from a pipe so that it can hand
// the terminal to a shell, and window changes reach a shell while it runs).
func (s *Server) workbench(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		hs, _ := sess.Context().Value(ctxKey{}).(*daemon.Session)
		pty, windows, ok := sess.Pty()
		if hs == nil || !ok {
			next(sess)
			return
		}
		env := append(sess.Environ(), "TERM="+pty.Term)
		scr, err := s.d.NewScreen(hs, daemon.Terminal{In: sess, Out: sess, Raw: rawChannel(sess), Gone: sess.Context().Done(), Env: env,
			Cols: pty.Window.Width, Rows: pty.Window.Height, Frames: s.opts.OutputFrames, FPS: s.opts.FPS})
		if err != nil {
			wish.Fatalln(sess, "rangekeeper: cannot open the workbench:", err)
			return
		}
		ctx, cancel := context.WithCancel(sess.Context())
		defer cancel()
		go func() {
			for {
				select {
				case <-ctx.Done():
					scr.Quit() // the client went away
					return
				case w, ok := <-windows:
					if !ok {
						windows = nil // the session's requests ended; its context ends next
						continue
					}
					scr.Resize(w.Width, w.Height)
				}
			}
		}()
		// The program's own error (a client gone mid-frame) ends the session like the
		// client's going; there is nobody left to tell.
		_ = scr.Run()
		next(sess)
	}
}

// Addr is the address the server listens on once serving (tests listen on :0).
func Addr(l net.Listener) string { return l.Addr().String() }

// endConn closes the session's whole connection (its context ends, so does its program).
func endConn(sess ssh.Session) {
	if c, ok := sess.Context().Value(ssh.ContextKeyConn).(gossh.Conn); ok {
		c.Close()
		return
	}
	sess.Close()
}
