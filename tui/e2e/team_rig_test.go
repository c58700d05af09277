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
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/state"
)

// teamOperator is one operator of a team rig: a key in OpenSSH's format for ssh -i.
type teamOperator struct {
	name, role  string
	keyPath, fp string
	authorized  string // the operators file's key line
}

func newTeamOperator(t *testing.T, dir, name, role string) teamOperator {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := gossh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "id_"+name)
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, _ := gossh.NewSignerFromKey(priv)
	return teamOperator{name: name, role: role, keyPath: keyPath, fp: gossh.FingerprintSHA256(signer.PublicKey()),
		authorized: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))}
}

// teamRig is `rangekeeper serve` running for a test, with its operators file and the
// known_hosts its host key goes in.
type teamRig struct {
	t         *testing.T
	bin, dir  string
	statePath string
	port      string
	known     string
	env       []string // the environment of every command run beside the daemon
	extraEnv  []string
	hostFP    string
	serve     *exec.Cmd
}

// startTeam writes the operators file and starts serve on a free loopback port; the daemon is
// killed when the test ends.
func startTeam(t *testing.T, bin, dir string, ops ...teamOperator) *teamRig {
	t.Helper()
	var roster strings.Builder
	roster.WriteString("operators:\n")
	for _, o := range ops {
		fmt.Fprintf(&roster, "  - name: %s\n    role: %s\n    keys:\n      - %s\n", o.name, o.role, o.authorized)
	}
	opsPath := filepath.Join(dir, "operators.yaml")
	if err := os.WriteFile(opsPath, []byte(roster.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := &teamRig{t: t, bin: bin, dir: dir, statePath: filepath.Join(dir, "state", "state.db")}
	_, r.port, _ = net.SplitHostPort(addr)
	r.extraEnv = []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "RANGEKEEPER_LOCK_DIR=" + filepath.Join(dir, "locks"), raceEnv(t)}
	r.env = append(os.Environ(), r.extraEnv...)
	r.serve = exec.Command(bin, "--state", r.statePath, "serve", "--listen", addr, "--operators", opsPath)
	r.serve.Env = r.env
	stderr, _ := r.serve.StderrPipe()
	if err := r.serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.serve.Process.Kill(); r.serve.Wait() })
	lines := bufio.NewScanner(stderr)
	for r.hostFP == "" && lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "host key "); ok {
			r.hostFP = strings.TrimSpace(after)
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
	if got := gossh.FingerprintSHA256(hk.PublicKey()); got != r.hostFP {
		t.Fatalf("serve printed host key %q; the key file's is %q", r.hostFP, got)
	}
	r.known = filepath.Join(dir, "known_hosts")
	os.WriteFile(r.known, []byte(fmt.Sprintf("[127.0.0.1]:%s %s", r.port, gossh.MarshalAuthorizedKey(hk.PublicKey()))), 0o600)
	return r
}

// ssh opens o's workbench with the system's ssh client in a w×h tmux pane.
func (r *teamRig) ssh(tmux, sshBin, socket string, o teamOperator, w, h int) pane {
	cmd := fmt.Sprintf("%s -tt -p %s -i %s -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s -F /dev/null %s@127.0.0.1",
		sshBin, r.port, o.keyPath, r.known, o.name)
	return startPane(r.t, tmux, socket, w, h, "ssh", cmd)
}

// journal reads the journal beside the running daemon (through its socket).
func (r *teamRig) journal() ([]state.Entry, []byte) {
	r.t.Helper()
	jc := exec.Command(r.bin, "--state", r.statePath, "journal", "-o", "json")
	jc.Env = r.env
	out, err := jc.Output()
	if err != nil {
		r.t.Fatalf("journal beside the daemon: %v", err)
	}
	var es []state.Entry
	if err := json.Unmarshal(out, &es); err != nil {
		r.t.Fatalf("journal -o json: %v\n%s", err, out)
	}
	return es, out
}
