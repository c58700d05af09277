package sshd

import (
	"context"
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
// forwarding.
func (s *Server) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	w, _ := ctx.Value(idleKey{}).(*idleWatch)
	ssh.DefaultSessionHandler(srv, conn, inputChannel{NewChannel: nc, idle: w}, ctx)
}

type inputChannel struct {
	gossh.NewChannel
	idle *idleWatch
}

func (n inputChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := n.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
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
