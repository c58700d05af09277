package sshd_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
)

// TestOnlyTheWorkbenchIsServed: no command execution, no subsystem, no PTY-less shell, no port
// forwarding, and at most MaxSessions sessions.
func TestOnlyTheWorkbenchIsServed(t *testing.T) {
	r := newBenchRig(t, 3) // MaxSessions 3
	c, err := dial(r.addr, r.signers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, run := range map[string]func() ([]byte, error){
		"exec": func() ([]byte, error) {
			s, _ := c.NewSession()
			defer s.Close()
			return s.CombinedOutput("ls /")
		},
		"sftp": func() ([]byte, error) {
			s, _ := c.NewSession()
			defer s.Close()
			out := &lockedBuf{}
			s.Stdout, s.Stderr = out, out
			if err := s.RequestSubsystem("sftp"); err != nil {
				return nil, err
			}
			return out.Bytes(), s.Wait()
		},
		"no pty": func() ([]byte, error) {
			s, _ := c.NewSession()
			defer s.Close()
			out := &lockedBuf{}
			s.Stdout, s.Stderr = out, out
			if err := s.Shell(); err != nil {
				return nil, err
			}
			return out.Bytes(), s.Wait()
		},
	} {
		out, err := run()
		if err == nil {
			t.Errorf("%s: served (%q); want refused", name, out)
		}
	}
	if conn, err := c.Dial("tcp", r.addr); err == nil {
		conn.Close()
		t.Error("local port forwarding was allowed")
	}
	if _, err := c.Listen("tcp", "127.0.0.1:0"); err == nil {
		t.Error("remote port forwarding was allowed")
	}
	for i := range 3 {
		r.connect(t, i, nil).settle()
	}
	s, _ := c.NewSession()
	s.RequestPty("xterm", 40, 120, nil)
	out := &lockedBuf{}
	s.Stdout, s.Stderr = out, out
	s.Shell()
	s.Wait()
	if !strings.Contains(out.String(), "sessions already") {
		t.Errorf("a 4th session past MaxSessions 3 got %q; want refused", out.String())
	}
}

// TestReloadEndsSessionsOfRemovedKeys: SIGHUP's reload ends the session of a key removed from
// the operators file and keeps the others.
func TestReloadEndsSessionsOfRemovedKeys(t *testing.T) {
	r := newBenchRig(t, 2)
	a, b := r.connect(t, 0, nil), r.connect(t, 1, nil)
	a.settle()
	b.settle()
	raw, _ := os.ReadFile(r.opsPath)
	keep := strings.SplitN(string(raw), "  - name: opba", 2)[0] // drop the second operator
	if err := os.WriteFile(r.opsPath, []byte(keep), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := r.d.Reload()
	if err != nil || n != 1 {
		t.Fatalf("Reload = %d, %v; want one session ended", n, err)
	}
	done := make(chan error, 1)
	go func() { done <- b.sess.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the removed key's session is still open")
	}
	for start := time.Now(); len(r.d.Hub().Identities()) != 1 && time.Since(start) < 5*time.Second; {
		time.Sleep(20 * time.Millisecond)
	}
	if ids := r.d.Hub().Identities(); len(ids) != 1 || ids[0].Operator != "opaa" {
		t.Errorf("sessions after reload = %+v; want opaa's only", ids)
	}
	if _, err := dial(r.addr, r.signers[1]); err == nil {
		t.Error("the removed key still authenticates")
	}
	// A file that does not parse leaves the old one in force.
	os.WriteFile(r.opsPath, []byte("operators: [\n"), 0o600)
	if _, err := r.d.Reload(); err == nil || r.d.Operators() == nil {
		t.Errorf("a broken file reloaded: %v", err)
	}
}

// TestActionRatePerOperator: past the burst, an operator's actions are refused, and one
// operator's rate does not spend another's.
func TestActionRatePerOperator(t *testing.T) {
	r := newBenchRig(t, 1) // rate 1/s, burst 2
	alice := action.Identity{Operator: "alice", Transport: action.TransportSSH}
	bob := action.Identity{Operator: "bob", Transport: action.TransportSSH}
	var errs []error
	for range 3 {
		errs = append(errs, r.d.Admit(alice, backends.ActionSnapshot))
	}
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], action.ErrForbidden) || !strings.Contains(errs[2].Error(), "alice started actions faster") {
		t.Errorf("3 actions at once with burst 2 = %v; want the third refused naming alice", errs)
	}
	if err := r.d.Admit(bob, backends.ActionSnapshot); err != nil {
		t.Errorf("bob refused by alice's rate: %v", err)
	}
}

// lockedBuf is a buffer the client's stdout and stderr copiers share.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

func (l *lockedBuf) String() string { return string(l.Bytes()) }
