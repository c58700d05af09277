package sockapi_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/daemon/daemontest"
	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/state"
)

// newDaemon serves a daemon over a simulated fleet of 20 Kubernetes sandboxes on a socket.
func newDaemon(t *testing.T) (*daemon.Daemon, string) {
	t.Helper()
	dir := t.TempDir()
	db := daemontest.State(t, dir)
	sup := daemontest.Supervisor(t, 0, simfleet.New("sim", backends.KindKubernetes, 20, time.Hour))
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	k, _ := gossh.NewPublicKey(pub)
	ops := filepath.Join(dir, "operators.yaml")
	key := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k)))
	if err := os.WriteFile(ops, []byte("operators:\n  - name: alice\n    role: operator\n    keys: [\""+key+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Options{Supervisor: sup, State: db, NewLayer: daemontest.Layer(sup, db), OperatorsPath: ops, Layer: action.Options{LockDir: filepath.Join(dir, "locks")}})
	if err != nil {
		t.Fatal(err)
	}
	sock := serveSocket(t, d, dir)
	return d, sock
}

// screen collects what an attached terminal receives.
type screen struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

// waitFor polls the received text (escapes stripped, whitespace removed) for want.
func (s *screen) waitFor(t *testing.T, want string, within time.Duration) {
	t.Helper()
	want = strings.Join(strings.Fields(want), "")
	for end := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		got := strings.Join(strings.Fields(ansi.Strip(s.out.String())), "")
		s.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the attached terminal never showed %q within %s; got: %s", want, within, got[max(0, len(got)-1500):])
		}
	}
}

// attached opens the workbench through the socket as the local CLI does.
func attached(t *testing.T, sock string) (keys *io.PipeWriter, scr *screen, ended <-chan error) {
	t.Helper()
	in, keys := io.Pipe()
	scr = &screen{}
	res := make(chan error, 1)
	go func() {
		res <- sockapi.NewClient(sock).Attach(context.Background(), sockapi.AttachRequest{Cols: 160, Rows: 40, Env: []string{"TERM=xterm-256color"}},
			in, scr, make(chan [2]int))
	}()
	t.Cleanup(func() { keys.Close() })
	return keys, scr, res
}

// TestLocalWorkbenchIsADaemonSession: the local workbench attached through the socket is one of
// the daemon's sessions — the daemon's fleet on screen, the local user in the team line and in
// the hub as transport "socket" — and it ends when the operator quits.
func TestLocalWorkbenchIsADaemonSession(t *testing.T) {
	d, sock := newDaemon(t)
	keys, scr, ended := attached(t, sock)
	me := state.Operator()
	scr.waitFor(t, "team: "+me, 10*time.Second)
	scr.waitFor(t, "20 sandboxes", 10*time.Second)
	ids := d.Hub().Identities()
	if len(ids) != 1 || ids[0].Operator != me || ids[0].Transport != action.TransportSocket {
		t.Fatalf("daemon sessions = %+v; want one, %s over the socket", ids, me)
	}
	io.WriteString(keys, "q")
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("attach after q: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the attached workbench did not end within 10 s of q")
	}
	for end := time.Now().Add(5 * time.Second); d.Hub().Count() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the session stayed in the hub after its workbench quit")
		}
	}
}

// TestAttachedWorkbenchEndsWithTheDaemon: a daemon that stops ends the attached terminal's
// session, and the client returns instead of hanging on a dead stream.
func TestAttachedWorkbenchEndsWithTheDaemon(t *testing.T) {
	d, sock := newDaemon(t)
	_, scr, ended := attached(t, sock)
	scr.waitFor(t, "team:", 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d.Shutdown(ctx)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the attached workbench did not end within 10 s of the daemon's shutdown")
	}
}

// TestAttachRefusesGarbage: a client that speaks anything but the attach messages is cut off.
func TestAttachRefusesGarbage(t *testing.T) {
	d, sock := newDaemon(t)
	conn, err := netDial(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"Cols":80,"Rows":24}`
	fmt.Fprintf(conn, "POST /v1/attach HTTP/1.1\r\nHost: rk\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: Upgrade\r\nUpgrade: rangekeeper-term/1\r\n\r\n%s", len(body), body)
	io.WriteString(conn, "x\x00\x01z") // an unknown message kind
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		t.Fatalf("the daemon did not close a garbage stream: %v", err)
	}
	for end := time.Now().Add(5 * time.Second); d.Hub().Count() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("a garbage stream's session stayed in the hub")
		}
	}
}

func netDial(sock string) (net.Conn, error) { return net.DialTimeout("unix", sock, 5*time.Second) }

// serveSocket serves d's socket in dir until the test ends, then stops the daemon and it.
func serveSocket(t *testing.T, d *daemon.Daemon, dir string) string {
	t.Helper()
	sock := filepath.Join(dir, "rk.sock")
	l, err := sockapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := sockapi.New(d, nil, sockapi.AttachOptions{})
	go srv.Serve(l)
	t.Cleanup(func() {
		c, cc := context.WithTimeout(context.Background(), 10*time.Second)
		defer cc()
		d.Shutdown(c)
		srv.Shutdown(c)
	})
	return sock
}
