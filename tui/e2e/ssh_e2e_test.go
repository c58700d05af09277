package e2e

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

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

	// The operator's key, in OpenSSH's format for ssh -i.
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := gossh.MarshalPrivateKey(priv, "alice")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "id_alice")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, _ := gossh.NewSignerFromKey(priv)
	fp := gossh.FingerprintSHA256(signer.PublicKey())
	ops := filepath.Join(dir, "operators.yaml")
	os.WriteFile(ops, []byte("operators:\n  - name: alice\n    role: operator\n    keys:\n      - "+strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))+"\n"), 0o600)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	statePath := filepath.Join(dir, "state", "state.db")
	extraEnv := []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "RANGEKEEPER_LOCK_DIR=" + filepath.Join(dir, "locks"), raceEnv(t)}
	env := append(os.Environ(), extraEnv...)
	serve := exec.Command(bin, "--state", statePath, "serve", "--listen", addr, "--operators", ops)
	serve.Env = env
	stderr, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	lines := bufio.NewScanner(stderr)
	hostFP := ""
	for hostFP == "" && lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "host key "); ok {
			hostFP = strings.TrimSpace(after)
		}
	}
	go func() {
		for lines.Scan() {
			t.Log("serve:", lines.Text())
		}
	}()
	// known_hosts from the key the daemon created in its state directory: ssh checks it strictly.
	raw, err := os.ReadFile(filepath.Join(dir, "state", "ssh_host_ed25519_key"))
	if err != nil {
		t.Fatal(err)
	}
	hk, err := gossh.ParsePrivateKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := gossh.FingerprintSHA256(hk.PublicKey()); got != hostFP {
		t.Fatalf("serve printed host key %q; the key file's is %q", hostFP, got)
	}
	known := filepath.Join(dir, "known_hosts")
	os.WriteFile(known, []byte(fmt.Sprintf("[127.0.0.1]:%s %s", port, gossh.MarshalAuthorizedKey(hk.PublicKey()))), 0o600)

	sshCmd := fmt.Sprintf("%s -tt -p %s -i %s -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s -F /dev/null alice@127.0.0.1",
		sshBin, port, keyPath, known)
	p := startPane(t, tmux, "rk-e2essh-"+dockertest.RunID, 160, 40, "ssh", sshCmd)

	p.wait("team: alice", 30*time.Second)
	p.wait(project, 30*time.Second)

	// The local workbench, opened beside it, attaches to the daemon through its socket: one team,
	// the local user in both sessions' team line.
	me := state.Operator()
	local := startPane(t, tmux, "rk-e2elocal-"+dockertest.RunID, 160, 40, "rangekeeper", bin+" --state "+statePath, extraEnv...)
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
	jc := exec.Command(bin, "--state", statePath, "journal", "-o", "json")
	jc.Env = env
	out, err := jc.Output()
	if err != nil {
		t.Fatalf("journal beside the daemon: %v", err)
	}
	var es []state.Entry
	if err := json.Unmarshal(out, &es); err != nil {
		t.Fatalf("journal -o json: %v\n%s", err, out)
	}
	ok := false
	for _, e := range es {
		ok = ok || e.Action == "snapshot" && e.Outcome == state.OutcomeOK && e.Operator == "alice" && e.Transport == "ssh" && e.Fingerprint == fp
	}
	if !ok {
		t.Errorf("journal lacks alice's snapshot over ssh with her fingerprint %s: %s", fp, out)
	}

	// q ends the session (the daemon stays); SIGTERM stops the daemon cleanly.
	p.keys("q")
	p.wait("ssh exited 0", 10*time.Second)
	serve.Process.Signal(syscall.SIGTERM)
	if err := serve.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}
