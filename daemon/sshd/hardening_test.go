package sshd_test

import (
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/daemon/sshd"
	"github.com/rangekeeper/rangekeeper/operators"
)

// countWriter counts the writes (frames) a client receives and the longest wait between two.
type countWriter struct {
	n atomic.Int64

	mu      sync.Mutex
	last    time.Time
	longest time.Duration
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.n.Add(1) > 1 {
		c.mu.Lock()
		c.longest = max(c.longest, time.Since(c.last))
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.last = time.Now()
	c.mu.Unlock()
	return len(p), nil
}

func (c *countWriter) gap() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.longest
}

// TestIdleTimeoutCountsOnlyInput: on a fleet that changes every few milliseconds, so the server
// keeps writing frames (measured: at most ~300 ms apart, under the timeout, so a timeout that
// counted any traffic never fires), a session without input is closed once IdleTimeout has
// passed, and a session whose client types or resizes is kept until its input stops that long.
func TestIdleTimeoutCountsOnlyInput(t *testing.T) {
	const idle = 750 * time.Millisecond
	const slack = 3 * time.Second // a loaded machine's delay in closing
	r := newSimRig(t, 3, 12, 2*time.Millisecond, sshd.Options{IdleTimeout: idle}, nil)
	for i, tc := range []struct {
		name  string
		input func(c *client, n int) // nil: none
	}{
		{"no input", nil},
		{"keys", func(c *client, n int) { io.WriteString(c.in, []string{"j", "k"}[n%2]) }},
		{"window changes", func(c *client, n int) { c.sess.WindowChange(40, 160+n%2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out := &countWriter{}
			c := r.connect(t, i, out)
			closed := make(chan time.Time, 1)
			go func() { c.sess.Wait(); closed <- time.Now() }()
			last := start // the last input sent
			tick := time.NewTicker(idle / 5)
			defer tick.Stop()
			var framesAt int64 // frames received once the first screen is painted
			for n := 0; time.Since(start) < 3*idle; n++ {
				select {
				case at := <-closed:
					if tc.input != nil {
						t.Fatalf("closed %s after its last input; want kept open while input arrives every %s", at.Sub(last), idle/5)
					}
					if d := at.Sub(start); d < idle {
						t.Fatalf("closed after %s without input; want not before IdleTimeout %s", d, idle)
					}
					if got := out.n.Load() - framesAt; framesAt == 0 || got < 3 {
						t.Fatalf("only %d frames reached the idle client; the test needs a fleet that keeps the server writing", got)
					}
					t.Logf("closed after %s; %d frames, at most %s apart", at.Sub(start), out.n.Load(), out.gap())
					return
				case <-tick.C:
					if n == 1 {
						framesAt = out.n.Load()
					}
					if tc.input != nil {
						// Taken before the send: the server cannot see the input earlier, so
						// its idle clock starts no sooner (after the send, a loaded machine
						// put the server's start before ours).
						last = time.Now()
						tc.input(c, n)
					}
				}
			}
			if tc.input == nil {
				select {
				case <-closed:
				case <-time.After(slack):
					t.Fatalf("a session without input for %s is still open (IdleTimeout %s; %d frames written meanwhile)", time.Since(start), idle, out.n.Load())
				}
				return
			}
			// The input stops: now the session ends, IdleTimeout after the last of it.
			select {
			case at := <-closed:
				if d := at.Sub(last); d < idle {
					t.Errorf("closed %s after the last input; want not before IdleTimeout %s", d, idle)
				}
			case <-time.After(idle + slack):
				t.Errorf("still open %s after the last input (IdleTimeout %s)", time.Since(last), idle)
			}
		})
	}
}

// TestNoAgentForwarding: a session's request for agent (or X11) forwarding is refused, the
// server never opens an agent channel, and the workbench still serves the session.
func TestNoAgentForwarding(t *testing.T) {
	r := newSimRig(t, 1, 12, 0, sshd.Options{}, nil)
	c, err := dial(r.addr, r.signers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	agentChans := c.HandleChannelOpen("auth-agent@openssh.com")
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct {
		name string
		send func() (bool, error)
	}{
		{"auth-agent-req@openssh.com", func() (bool, error) { return s.SendRequest("auth-agent-req@openssh.com", true, nil) }},
		{"agent.RequestAgentForwarding", func() (bool, error) { return agent.RequestAgentForwarding(s) == nil, nil }},
		{"x11-req", func() (bool, error) {
			return s.SendRequest("x11-req", true, gossh.Marshal(struct {
				Single        bool
				Proto, Cookie string
				Screen        uint32
			}{false, "MIT-MAGIC-COOKIE-1", "00", 0}))
		}},
	} {
		if ok, err := req.send(); ok || err != nil {
			t.Errorf("%s = %v, %v; want refused", req.name, ok, err)
		}
	}
	out := &countWriter{}
	s.Stdout = out
	if err := s.RequestPty("xterm-256color", 40, 120, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); out.n.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the workbench never painted after the refused requests")
		}
	}
	select {
	case ch := <-agentChans:
		ch.Reject(gossh.Prohibited, "test")
		t.Error("the server opened an agent channel")
	case <-time.After(300 * time.Millisecond):
	}
}

// TestOnlyPublicKeyAuthentication: the server offers publickey alone, and a client that tries
// a password or keyboard-interactive anyway is refused.
func TestOnlyPublicKeyAuthentication(t *testing.T) {
	r := newSimRig(t, 1, 12, 0, sshd.Options{}, nil)
	var asked atomic.Bool
	for _, tc := range []struct {
		method  string
		auth    gossh.AuthMethod
		refusal string // how x/crypto's client reports the server's failure reply
	}{
		{"password", gossh.Password("hunter2"), "attempted methods [none password]"},
		// The client expects questions (60) and reports the immediate failure (51) this way.
		{"keyboard-interactive", gossh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
			asked.Store(true)
			return make([]string, len(qs)), nil
		}), "unexpected message type 51 (expected 60)"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			var allowed []string
			forced := false
			c, err := gossh.Dial("tcp", r.addr, &gossh.ClientConfig{
				User: "rk", Auth: []gossh.AuthMethod{tc.auth},
				HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
				AuthCallback: func(ctx *gossh.ClientAuthContext) (gossh.AuthMethod, error) {
					if allowed == nil {
						allowed = ctx.AllowedMethods // the server's answer to "none"
					}
					if !forced { // try it even though the server does not offer it
						forced = true
						return tc.auth, nil
					}
					return nil, nil
				},
			})
			if err == nil {
				c.Close()
				t.Fatalf("%s authenticated", tc.method)
			}
			if !slices.Equal(allowed, []string{"publickey"}) {
				t.Errorf("the server offers %q; want publickey only", allowed)
			}
			if !forced || !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("dial = %v; want %s tried and refused (%q)", err, tc.method, tc.refusal)
			}
		})
	}
	if asked.Load() {
		t.Error("the server asked keyboard-interactive questions")
	}
}

// TestSessionLimitIsAtomic: sessions arriving together cannot exceed MaxSessions. The hook holds
// each admitted session between its admission and its joining the hub, where a check of the
// hub's count followed by a join would let every racer through.
func TestSessionLimitIsAtomic(t *testing.T) {
	const limit, n = 2, 6
	var admitted atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	r := newSimRig(t, n, 12, 0, sshd.Options{MaxSessions: limit}, func(s *sshd.Server) {
		sshd.SetAdmitted(s, func() { admitted.Add(1); <-release })
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	var refused atomic.Int32
	start := make(chan struct{})
	for i := range n {
		go func() {
			<-start
			c, err := dial(r.addr, r.signers[i])
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { c.Close() })
			s, err := c.NewSession()
			if err != nil {
				t.Error(err)
				return
			}
			out := &lockedBuf{}
			s.Stdout, s.Stderr = out, out
			s.RequestPty("xterm-256color", 40, 120, nil)
			if err := s.Shell(); err != nil {
				t.Error(err)
				return
			}
			s.Wait()
			if strings.Contains(out.String(), "sessions already") {
				refused.Add(1)
			}
		}()
	}
	close(start)
	for begin := time.Now(); admitted.Load()+refused.Load() < n && time.Since(begin) < 15*time.Second; {
		time.Sleep(20 * time.Millisecond)
	}
	a, f := admitted.Load(), refused.Load()
	once.Do(func() { close(release) })
	if a != limit || f != n-limit {
		t.Fatalf("%d sessions at once with MaxSessions %d: %d admitted, %d refused; want %d and %d", n, limit, a, f, limit, n-limit)
	}
	for begin := time.Now(); r.d.Hub().Count() != limit; time.Sleep(20 * time.Millisecond) {
		if time.Since(begin) > 10*time.Second {
			t.Fatalf("%d sessions in the hub; want %d", r.d.Hub().Count(), limit)
		}
	}
}

// offeredSession is what Identify reads of a session: the key the connection authenticated with
// and the Permissions the public-key callback recorded.
type offeredSession struct {
	ssh.Session // nil: Identify calls only the methods below
	key         ssh.PublicKey
	recorded    string // the fingerprint in the Permissions; "" none
}

func (o offeredSession) PublicKey() ssh.PublicKey { return o.key }
func (o offeredSession) Permissions() ssh.Permissions {
	p := &gossh.Permissions{}
	if o.recorded != "" {
		p.Extensions = map[string]string{sshd.ExtFingerprint: o.recorded}
	}
	return ssh.Permissions{Permissions: p}
}
func (o offeredSession) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
}

// TestIdentifyTakesTheAuthenticatedKey: Identify names the operator of the key that
// authenticated, and refuses a session whose recorded fingerprint is another key's, as a
// library calling the callback for several offered keys and caching them would leave it.
func TestIdentifyTakesTheAuthenticatedKey(t *testing.T) {
	vic, root, gone := newSigner(t).PublicKey(), newSigner(t).PublicKey(), newSigner(t).PublicKey()
	raw := "operators:\n" +
		"  - name: vic\n    role: viewer\n    keys: [\"" + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(vic))) + "\"]\n" +
		"  - name: root\n    role: admin\n    keys: [\"" + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(root))) + "\"]\n"
	f, err := operators.Parse("operators.yaml", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	fp := operators.Fingerprint
	for _, tc := range []struct {
		name     string
		key      gossh.PublicKey
		recorded string
		want     string // operator, or the error's text
		role     operators.Role
	}{
		{"vic authenticated, root's offer recorded", vic, fp(root), "key mismatch", ""},
		{"root authenticated, vic's offer recorded", root, fp(vic), "key mismatch", ""},
		{"nothing recorded", vic, "", "key mismatch", ""},
		{"no key", nil, fp(vic), "no public key", ""},
		{"a key no longer listed", gone, fp(gone), "not in the operators file", ""},
		{"vic authenticated and recorded", vic, fp(vic), "vic", operators.Viewer},
		{"root authenticated and recorded", root, fp(root), "root", operators.Admin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := offeredSession{recorded: tc.recorded}
			if tc.key != nil {
				sess.key = tc.key
			}
			who, role, err := sshd.Identify(f, sess)
			if tc.role == "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Identify = %+v, %v; want an error with %q", who, err, tc.want)
				}
				if tc.want == "not in the operators file" && !errors.Is(err, operators.ErrUnknown) {
					t.Errorf("err = %v; want operators.ErrUnknown", err)
				}
				return
			}
			want := action.Identity{Operator: tc.want, Transport: action.TransportSSH, Fingerprint: fp(tc.key), Source: "127.0.0.1:50000"}
			if err != nil || who != want || role != tc.role {
				t.Fatalf("Identify = %+v, %s, %v; want %+v, %s", who, role, err, want, tc.role)
			}
		})
	}
}
