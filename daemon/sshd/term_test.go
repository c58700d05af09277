package sshd_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"
)

// term is a real SSH client session with a PTY, as an operator's terminal opens one.
type term struct {
	t      *testing.T
	client *gossh.Client
	sess   *gossh.Session
	in     io.WriteCloser

	mu  sync.Mutex
	out bytes.Buffer
}

func (tm *term) Write(p []byte) (int, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.out.Len() > 4<<20 { // keep the tail: screens are redrawn
		tail := append([]byte(nil), tm.out.Bytes()[tm.out.Len()-(1<<20):]...)
		tm.out.Reset()
		tm.out.Write(tail)
	}
	return tm.out.Write(p)
}

func newSigner(t testing.TB) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func authorized(s gossh.Signer) string {
	return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey())))
}

func dial(addr string, signers ...gossh.Signer) (*gossh.Client, error) {
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "rk", Auth: []gossh.AuthMethod{gossh.PublicKeys(signers...)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
}

// openTerm connects with signers and opens the workbench in a w×h PTY.
func openTerm(t testing.TB, addr string, w, h int, signers ...gossh.Signer) *term {
	t.Helper()
	c, err := dial(addr, signers...)
	if err != nil {
		t.Fatalf("ssh dial: %v", err)
	}
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{client: c, sess: sess}
	if tt, ok := t.(*testing.T); ok {
		tm.t = tt
	}
	if err := sess.RequestPty("xterm-256color", h, w, gossh.TerminalModes{gossh.ECHO: 0}); err != nil {
		t.Fatal(err)
	}
	tm.in, _ = sess.StdinPipe()
	sess.Stdout = tm
	sess.Stderr = tm
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return tm
}

func (tm *term) key(s string) {
	if _, err := io.WriteString(tm.in, s); err != nil && tm.t != nil {
		tm.t.Logf("key %q: %v", s, err)
	}
}

var cuf = regexp.MustCompile(`\x1b\[(\d*)C`)

// text is everything the client received, as text without the escape sequences, cursor moves
// forward turned into spaces (the renderer skips unchanged cells) and whitespace removed:
// matches tolerate the renderer's choice of how to paint a change.
func (tm *term) text(from int) string {
	tm.mu.Lock()
	raw := tm.out.Bytes()
	if from > len(raw) {
		from = len(raw)
	}
	s := string(raw[from:])
	tm.mu.Unlock()
	s = cuf.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(m, "\x1b["), "C"))
		return strings.Repeat(" ", max(n, 1))
	})
	return squeeze(ansi.Strip(s))
}

func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }

// mark is the current length of the output, to look only at what comes after.
func (tm *term) mark() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.Len()
}

// wait polls the output after from until it contains want (whitespace ignored).
func (tm *term) wait(from int, want string, within time.Duration) time.Duration {
	tm.t.Helper()
	start := time.Now()
	w := squeeze(want)
	for {
		if strings.Contains(tm.text(from), w) {
			return time.Since(start)
		}
		if time.Since(start) > within {
			s := tm.text(0)
			tm.t.Fatalf("the screen never showed %q within %s; last output: %s", want, within, s[max(0, len(s)-1500):])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitScreen asks for a full redraw (ctrl+l) until a whole frame contains want: a change the
// renderer painted as a diff (only the cells that changed) is then read in one piece.
func (tm *term) waitScreen(want string, within time.Duration) {
	tm.t.Helper()
	start := time.Now()
	w := squeeze(want)
	for {
		m := tm.mark()
		tm.key("\x0c")
		time.Sleep(400 * time.Millisecond)
		if strings.Contains(tm.text(m), w) {
			return
		}
		if time.Since(start) > within {
			s := tm.text(m)
			tm.t.Fatalf("no full frame showed %q within %s; last frame: %s", want, within, s)
		}
	}
}

// waitServing returns once the server answers with its SSH banner: its accept loop runs (so a
// Shutdown does not race the server's start).
func waitServing(t testing.TB, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 8)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf[:4]) != "SSH-" {
		t.Fatalf("no SSH banner from %s: %q %v", addr, buf, err)
	}
}
