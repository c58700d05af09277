package sshd

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// agentRequest asks the server to forward the client's SSH agent. charm.land/ssh (v0.4.3)
// answers it "yes" and has no option to refuse it (session.go: "TODO: option/callback to allow
// agent forwarding"), so sessionChannel filters it out of the session's requests and refuses it
// itself. The server never opens an agent channel back to the client either (nothing here calls
// ssh.ForwardAgentConnections), and the only channel type served is "session".
const agentRequest = "auth-agent-req@openssh.com"

// idleWatch ends a connection after IdleTimeout without client input: keys (session data read)
// and window changes. charm.land/ssh's own IdleTimeout resets on any traffic, the server's writes
// and the client's window adjustments included, so a session watching a churning fleet would
// never time out under it; it is left unset.
type idleWatch struct {
	start time.Time    // monotonic origin
	last  atomic.Int64 // time.Since(start) at the last input
}

func newIdleWatch() *idleWatch { return &idleWatch{start: time.Now()} }

func (w *idleWatch) touch() {
	if w != nil {
		w.last.Store(int64(time.Since(w.start)))
	}
}

// idle is how long since the last input (or since the connection opened).
func (w *idleWatch) idle() time.Duration {
	return time.Since(w.start) - time.Duration(w.last.Load())
}

// run calls end once no input arrived for d; it returns when ctx ends.
func (w *idleWatch) run(ctx context.Context, d time.Duration, end func()) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			idle := w.idle()
			if idle >= d {
				end()
				return
			}
			t.Reset(d - idle)
		}
	}
}

type idleKey struct{}

// watchConn starts a connection's idle watch (the server's ConnCallback): from the connection's
// opening, so one that never opens a workbench is closed after IdleTimeout as well.
func (s *Server) watchConn(ctx ssh.Context, c net.Conn) net.Conn {
	w := newIdleWatch()
	ctx.SetValue(idleKey{}, w)
	go w.run(ctx, s.opts.IdleTimeout, func() { c.Close() })
	return c
}

// sessionChannel serves a "session" channel as charm.land/ssh's DefaultSessionHandler does, over
// a channel that reports the client's input to the connection's idle watch and refuses agent
// forwarding. The session's context also carries the channel itself (rawChannel).
func (s *Server) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	w, _ := ctx.Value(idleKey{}).(*idleWatch)
	cc := &channelContext{Context: ctx}
	ssh.DefaultSessionHandler(srv, conn, inputChannel{NewChannel: nc, idle: w, ctx: cc}, cc)
}

type rawKey struct{}

// channelContext is the connection's context plus the session's own channel, which
// charm.land/ssh does not expose: with its emulated PTY every write to the session turns "\n"
// into "\r\n", right for the workbench's frames but a corruption of a shell's output, which a
// real TTY (the sandbox's) has already translated; a bare "\n" there moves the cursor down only.
type channelContext struct {
	ssh.Context
	raw gossh.Channel // set once accepted, before the session's handler runs
}

func (c *channelContext) Value(key any) any {
	if key == (rawKey{}) {
		if c.raw == nil {
			return nil
		}
		return c.raw
	}
	return c.Context.Value(key)
}

// rawChannel is sess's channel, written to without translation.
func rawChannel(sess ssh.Session) io.Writer {
	if ch, ok := sess.Context().Value(rawKey{}).(gossh.Channel); ok {
		return ch
	}
	return nil
}

type inputChannel struct {
	gossh.NewChannel
	idle *idleWatch
	ctx  *channelContext
}

func (n inputChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := n.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	n.ctx.raw = ch
	out := make(chan *gossh.Request)
	go func() {
		defer close(out) // the session's handler ends its requests loop on it
		for r := range reqs {
			switch r.Type {
			case agentRequest:
				r.Reply(false, nil)
				continue
			case "window-change":
				n.idle.touch()
			}
			out <- r
		}
	}()
	return inputReader{Channel: ch, idle: n.idle}, out, nil
}

// inputReader is a session channel whose reads (the client's keys) count as input.
type inputReader struct {
	gossh.Channel
	idle *idleWatch
}

func (c inputReader) Read(p []byte) (int, error) {
	n, err := c.Channel.Read(p)
	if n > 0 {
		c.idle.touch()
	}
	return n, err
}
