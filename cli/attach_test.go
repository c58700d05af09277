package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
	"github.com/rangekeeper/rangekeeper/state"
)

// startServe runs `rangekeeper serve` on statePath (one admin in its operators file) until the
// test ends, and waits for its socket; it returns what serve writes to stderr.
func startServe(t *testing.T, statePath string) (stderr *syncBuffer) {
	t.Helper()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	k, _ := gossh.NewPublicKey(pub)
	ops := filepath.Join(t.TempDir(), "operators.yaml")
	os.WriteFile(ops, []byte("operators:\n  - name: alice\n    role: admin\n    keys: [\""+strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k)))+"\"]\n"), 0o600)
	stderr = &syncBuffer{b: &bytes.Buffer{}}
	f := newFactory(strings.NewReader(""), &bytes.Buffer{}, stderr)
	f.StatePath = statePath
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, f, &serveOptions{Listen: "127.0.0.1:0", Operators: ops, MaxSessions: 4, Idle: time.Minute, Rate: 10, Grace: time.Minute})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		f.closeAll()
	})
	sock := socketPath(statePath)
	for start := time.Now(); !sockapi.Available(sock); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the daemon never opened %s", sock)
		}
	}
	return stderr
}

// serveBesideASandbox makes a real Docker sandbox (project inspect-cli_<name>-i…) and runs
// `rangekeeper serve` on a fresh state file and config beside it.
func serveBesideASandbox(t *testing.T, name string) (project, statePath string, stderr *syncBuffer) {
	t.Helper()
	dockertest.Engine(t)
	project = "inspect-cli_" + name + "-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("RANGEKEEPER_LOCK_DIR", filepath.Join(dir, "locks"))
	statePath = filepath.Join(dir, "state", "state.db")
	return project, statePath, startServe(t, statePath)
}

// TestWorkbenchAttachesToTheDaemon opens the workbench (`rangekeeper`, in a terminal) while
// `rangekeeper serve` runs: it becomes one of the daemon's sessions (the local user is in the
// team), and snapshot and journal in a second terminal go through the socket beside it, under
// the daemon's locks and journal. q ends the session; --standalone would run it here.
func TestWorkbenchAttachesToTheDaemon(t *testing.T) {
	project, statePath, _ := serveBesideASandbox(t, "attach")

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Cols: 160, Rows: 40})
	var scr syncBuffer
	scr.b = &bytes.Buffer{}
	go io.Copy(&scr, ptmx)
	wf := newFactory(tty, tty, &bytes.Buffer{})
	root := newRootCmd(wf)
	root.SetArgs([]string{"--state", statePath})
	workbench := make(chan error, 1)
	go func() { workbench <- root.ExecuteContext(context.Background()) }()

	me := state.Operator()
	waitText(t, &scr, "team: "+me, 20*time.Second)
	present := false
	sockapi.NewClient(socketPath(statePath)).Events(context.Background(), func(ev sockapi.Event) bool {
		for _, o := range ev.Operators {
			present = present || o == me
		}
		return false
	})
	if !present {
		t.Fatalf("the daemon's team does not list %s while the workbench is open", me)
	}

	var out, stderr bytes.Buffer
	if code, routed := runRemote([]string{"--state", statePath, "snapshot", project}, strings.NewReader(""), &out, &stderr); !routed || code != 0 {
		t.Fatalf("snapshot beside the attached workbench: routed %v, exit %d\n%s", routed, code, stderr.String())
	}
	out.Reset()
	if code, routed := runRemote([]string{"--state", statePath, "journal", "-o", "json"}, strings.NewReader(""), &out, &stderr); !routed || code != 0 {
		t.Fatalf("journal beside the attached workbench: routed %v, exit %d\n%s", routed, code, stderr.String())
	}
	var es []state.Entry
	if err := json.Unmarshal(out.Bytes(), &es); err != nil {
		t.Fatalf("journal -o json: %v\n%s", err, out.String())
	}
	if len(es) == 0 || es[len(es)-1].Transport != "socket" || es[len(es)-1].Operator != me {
		t.Fatalf("journal beside the attached workbench: %+v; want the snapshot by %s over the socket", es, me)
	}

	ptmx.Write([]byte("q"))
	select {
	case err := <-workbench:
		if err != nil {
			t.Fatalf("workbench: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the attached workbench did not end within 20 s of q")
	}
}

// waitText polls what a terminal received (escapes stripped, whitespace removed) for want.
func waitText(t *testing.T, scr *syncBuffer, want string, within time.Duration) {
	t.Helper()
	want = strings.Join(strings.Fields(want), "")
	for end := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		got := strings.Join(strings.Fields(ansi.Strip(scr.String())), "")
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the terminal never showed %q within %s; got: %s", want, within, got[max(0, len(got)-1500):])
		}
	}
}

// TestAttachedOutMapsNewlinesAndTracksTheAlternateScreen: the daemon's bare newlines reach the
// raw terminal as CR LF, and whether its output left the alternate screen on is known even when
// the sequence is split across two writes.
func TestAttachedOutMapsNewlinesAndTracksTheAlternateScreen(t *testing.T) {
	var term bytes.Buffer
	out := &attachedOut{w: &term}
	steps := []struct {
		write, wantTerm string
		on              bool
	}{
		{"a\nb", "a\r\nb", false},
		{"\x1b[?10", "\x1b[?10", false},
		{"49hrow\n", "49hrow\r\n", true},
		{"\x1b[?1049l", "\x1b[?1049l", false},
		{"\x1b[?1049h\x1b[?1049l\x1b[?1049h", "\x1b[?1049h\x1b[?1049l\x1b[?1049h", true},
	}
	for _, s := range steps {
		term.Reset()
		if n, err := out.Write([]byte(s.write)); err != nil || n != len(s.write) {
			t.Fatalf("Write(%q) = %d, %v", s.write, n, err)
		}
		if term.String() != s.wantTerm || out.on != s.on {
			t.Errorf("after %q: terminal got %q (want %q), alternate screen %v (want %v)", s.write, term.String(), s.wantTerm, out.on, s.on)
		}
	}
}
