package sockapi_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/daemon/daemontest"
	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
	"github.com/rangekeeper/rangekeeper/state"
)

func TestMain(m *testing.M) { dockertest.Main(m) }

// TestShellInTheAttachedWorkbench: the local workbench attached through the socket opens a
// shell into a real Docker sandbox: keys reach it from the first, its output arrives whole and
// in order, a window change reaches it, and after exit the workbench takes the next key. The
// journal has the shell with the socket's identity.
func TestShellInTheAttachedWorkbench(t *testing.T) {
	dockertest.Engine(t)
	project := "inspect-sockshell-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	dir := t.TempDir()
	db := daemontest.State(t, dir)
	b, err := docker.New(docker.Endpoint{}, docker.Options{Snapshots: db})
	if err != nil {
		t.Fatal(err)
	}
	sup := daemontest.Supervisor(t, 30*time.Second, b)
	ops := filepath.Join(dir, "operators.yaml")
	writeOperators(t, ops)
	d, err := daemon.New(daemon.Options{Supervisor: sup, State: db, NewLayer: daemontest.Layer(sup, db), OperatorsPath: ops,
		Layer: action.Options{LockDir: filepath.Join(dir, "locks")}})
	if err != nil {
		t.Fatal(err)
	}
	sock := serveSocket(t, d, dir)

	in, keys := io.Pipe()
	defer keys.Close()
	scr := &screen{}
	resize := make(chan [2]int, 1)
	go sockapi.NewClient(sock).Attach(context.Background(), sockapi.AttachRequest{Cols: 160, Rows: 40, Env: []string{"TERM=xterm-256color"}},
		in, scr, resize)
	scr.waitFor(t, project, 30*time.Second)
	io.WriteString(keys, "/")
	io.WriteString(keys, "name="+project+"\r")
	scr.waitFor(t, "filter:name="+project, 10*time.Second)

	m := scr.mark()
	io.WriteString(keys, "E")
	scr.waitFrom(t, m, "/ #", 30*time.Second)
	m = scr.mark()
	io.WriteString(keys, "echo hello-$((6*7))\r")
	scr.waitFrom(t, m, "echo hello-$((6*7))", 10*time.Second) // the first key was not lost
	scr.waitFrom(t, m, "hello-42", 10*time.Second)

	// Output the program's frames would drop for a slow client arrives whole and in order.
	m = scr.mark()
	io.WriteString(keys, "seq 10000 19999\r")
	var all strings.Builder
	for i := 10000; i <= 19999; i++ {
		all.WriteString(strconv.Itoa(i))
	}
	scr.waitFrom(t, m, all.String()+"/ #", 20*time.Second)

	resize <- [2]int{97, 31}
	time.Sleep(300 * time.Millisecond)
	m = scr.mark()
	io.WriteString(keys, "stty size\r")
	scr.waitFrom(t, m, "31 97", 10*time.Second)

	m = scr.mark()
	io.WriteString(keys, "exit\r")
	scr.waitFrom(t, m, "exited 0", 20*time.Second)
	m = scr.mark()
	io.WriteString(keys, "?") // the workbench's next key: its help
	scr.waitFrom(t, m, "ctrl+l redraw", 10*time.Second)

	es, err := db.Journal(state.JournalQuery{Target: b.SandboxID(project)})
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, e := range es {
		if e.Action != "shell" {
			continue
		}
		phases = append(phases, string(e.Phase))
		if e.Operator != state.Operator() || e.Transport != string(action.TransportSocket) {
			t.Errorf("shell entry without the socket's identity: %+v", e)
		}
		if e.Phase == state.PhaseOutcome && (e.Outcome != state.OutcomeOK || e.Params["exit_code"] != "0") {
			t.Errorf("shell outcome = %+v; want ok, exit code 0", e)
		}
	}
	if len(phases) != 2 {
		t.Errorf("shell journal phases = %v; want its start and its end", phases)
	}
}

// writeOperators writes an operators file with one operator (the socket's user is admin by
// default, whatever the file says).
func writeOperators(t *testing.T, path string) {
	t.Helper()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	k, _ := gossh.NewPublicKey(pub)
	key := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k)))
	if err := os.WriteFile(path, []byte("operators:\n  - name: alice\n    role: operator\n    keys: [\""+key+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// mark is the length received so far, to look only at what comes after.
func (s *screen) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Len()
}

// waitFrom polls what was received after from (escapes stripped, whitespace removed) for want.
func (s *screen) waitFrom(t *testing.T, from int, want string, within time.Duration) {
	t.Helper()
	want = strings.Join(strings.Fields(want), "")
	for end := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		got := strings.Join(strings.Fields(ansi.Strip(s.out.String()[from:])), "")
		s.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the attached terminal never showed %q within %s; got: %s", want, within, got[max(0, len(got)-1500):])
		}
	}
}
