package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

// TestCommandsBesideAnOpenWorkbench opens the workbench (its supervisor, layer and state file)
// and, while it is open, takes a snapshot and reads the journal with the CLI: standalone, the
// state file is held only for a transaction, so neither waits for the other.
func TestCommandsBesideAnOpenWorkbench(t *testing.T) {
	dockertest.Engine(t)
	project := "inspect-cli_beside-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	statePath := filepath.Join(dir, "state", "state.db")
	f := newFactory(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	f.StatePath = statePath
	if _, _, err := newWorkbench(f); err != nil {
		t.Fatal(err)
	}
	defer f.closeAll()
	if _, stderr, err := run(t, "", "--state", statePath, "snapshot", project); err != nil {
		t.Fatalf("snapshot beside the open workbench: %v\n%s", err, stderr)
	}
	out, stderr, err := run(t, "", "--state", statePath, "journal", "-o", "json")
	if err != nil || !strings.Contains(out, `"transport": "standalone"`) {
		t.Fatalf("journal beside the open workbench: %v\n%s%s", err, out, stderr)
	}
}

// TestCommandsGoThroughTheDaemonSocket runs `rangekeeper serve` and sends snapshot and journal
// as a second process would: through the socket, journaled as the local user over "socket";
// --standalone still acts directly.
func TestCommandsGoThroughTheDaemonSocket(t *testing.T) {
	project, statePath, errOut := serveBesideASandbox(t, "sock")
	sock := socketPath(statePath)
	if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, %v; want 0600", st.Mode().Perm(), err)
	}
	var out, stderr bytes.Buffer
	code, routed := runRemote([]string{"--state", statePath, "snapshot", project}, strings.NewReader(""), &out, &stderr)
	if !routed || code != 0 {
		t.Fatalf("snapshot through the socket: routed %v, exit %d\n%s%s", routed, code, out.String(), stderr.String())
	}
	out.Reset()
	code, routed = runRemote([]string{"--state", statePath, "journal", "-o", "json"}, strings.NewReader(""), &out, &stderr)
	if !routed || code != 0 {
		t.Fatalf("journal through the socket: routed %v, exit %d\n%s", routed, code, stderr.String())
	}
	var es []state.Entry
	if err := json.Unmarshal(out.Bytes(), &es); err != nil {
		t.Fatalf("journal -o json: %v\n%s", err, out.String())
	}
	viaSocket := 0
	for _, e := range es {
		if e.Transport == "socket" && e.Action == "snapshot" {
			viaSocket++
		}
	}
	if viaSocket != 2 {
		t.Errorf("journal has %d snapshot entries over the socket, want intent and outcome: %+v", viaSocket, es)
	}
	// A destructive command without a terminal is refused by the daemon, asking for --yes.
	stderr.Reset()
	code, _ = runRemote([]string{"--state", statePath, "teardown", project}, strings.NewReader(""), &out, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--yes") {
		t.Errorf("teardown without --yes through the socket: exit %d, %s", code, stderr.String())
	}
	// --standalone is never routed, and works beside the daemon.
	if _, routed := runRemote([]string{"--standalone", "--state", statePath, "journal"}, nil, &out, &stderr); routed {
		t.Error("--standalone went through the socket")
	}
	if _, se, err := run(t, "", "--standalone", "--state", statePath, "journal"); err != nil {
		t.Errorf("standalone journal beside the daemon: %v %s", err, se)
	}
	if !strings.Contains(errOut.String(), "host key SHA256:") {
		t.Errorf("serve did not print its host key fingerprint: %s", errOut.String())
	}
}

// syncBuffer is a buffer a daemon goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
