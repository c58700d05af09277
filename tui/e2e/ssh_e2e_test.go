package e2e

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

// needSSH skips without the OpenSSH client, except in CI where it must be installed.
func needSSH(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ssh (openssh-client) required in CI: %v", err)
		}
		t.Skipf("no ssh client: %v", err)
	}
	return p
}

// TestServeOverSystemSSH runs `rangekeeper serve` and opens the workbench with the system's
// ssh client under tmux, checking the host key against the one the daemon created; the local
// workbench, opened beside it, joins the same team through the socket; the SSH operator
// snapshots a real Docker sandbox, and `rangekeeper journal`, run beside it, goes
// through the daemon's socket and shows the SSH identity with its key fingerprint.
func TestServeOverSystemSSH(t *testing.T) {
	tmux, sshBin := need(t), needSSH(t)
	dockertest.Engine(t)
	dir := t.TempDir()
	bin := buildWorkbench(t)
	project := "inspect-e2essh-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})

	alice := newTeamOperator(t, dir, "alice", "operator")
	r := startTeam(t, bin, dir, alice)
	p := r.ssh(tmux, sshBin, "rk-e2essh-"+dockertest.RunID, alice, 160, 40)

	p.wait("team: alice", 30*time.Second)
	p.wait(project, 30*time.Second)

	// The local workbench, opened beside it, attaches to the daemon through its socket: one team,
	// the local user in both sessions' team line.
	me := state.Operator()
	local := startPane(t, tmux, "rk-e2elocal-"+dockertest.RunID, 160, 40, "rangekeeper", bin+" --state "+r.statePath, r.extraEnv...)
	local.wait("team: alice "+me, 30*time.Second)
	p.wait("team: alice "+me, 10*time.Second)
	local.keys("q")
	local.wait("rangekeeper exited 0", 10*time.Second)
	for start := time.Now(); strings.Contains(p.capture(), me); time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the SSH session still lists %s after the local workbench quit:\n%s", me, p.capture())
		}
	}
	p.keys("/")
	p.literal("name=" + project)
	p.keys("Enter")
	p.wait("filter:name="+project, 10*time.Second)
	if s := p.capture(); strings.Contains(s, "teardown") {
		t.Errorf("an operator's screen offers teardown (admin only):\n%s", s)
	}
	p.keys("s")
	p.wait("name (optional", 5*time.Second)
	p.literal("e2e")
	p.keys("Enter")
	p.wait("snapshot "+project+" done: snapshot e2e", 120*time.Second)

	// The journal, from a second process while the daemon runs, goes through its socket.
	es, out := r.journal()
	ok := false
	for _, e := range es {
		ok = ok || e.Action == "snapshot" && e.Outcome == state.OutcomeOK && e.Operator == "alice" && e.Transport == "ssh" && e.Fingerprint == alice.fp
	}
	if !ok {
		t.Errorf("journal lacks alice's snapshot over ssh with her fingerprint %s: %s", alice.fp, out)
	}

	// q ends the session (the daemon stays); SIGTERM stops the daemon cleanly.
	p.keys("q")
	p.wait("ssh exited 0", 10*time.Second)
	r.serve.Process.Signal(syscall.SIGTERM)
	if err := r.serve.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}
