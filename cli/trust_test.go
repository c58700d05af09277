package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/backends/kubernetes"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/daemon/sockapi"
	"github.com/rangekeeper/rangekeeper/state"
)

// trustRig is a serve setup whose files all pass the trust check: a config directory, an
// operators file (alice, admin) and a state directory under a fresh t.TempDir (0700/0755
// directories under /tmp, root's sticky directory, which the rule accepts).
type trustRig struct {
	dir, ops, statePath string
	alice               gossh.Signer
}

func newTrustRig(t *testing.T) *trustRig {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("RANGEKEEPER_LOCK_DIR", filepath.Join(dir, "locks"))
	r := &trustRig{dir: dir, statePath: filepath.Join(dir, "state", "state.db"), alice: newTrustSigner(t)}
	os.MkdirAll(filepath.Join(dir, "ops"), 0o755)
	r.ops = filepath.Join(dir, "ops", "operators.yaml")
	if err := os.WriteFile(r.ops, []byte("operators:\n"+operatorEntry("alice", "admin", r.alice)), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

func newTrustSigner(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func operatorEntry(name, role string, s gossh.Signer) string {
	return "  - name: " + name + "\n    role: " + role + "\n    keys: [\"" + strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + "\"]\n"
}

// serve runs `rangekeeper serve` until ctx ends or it returns.
func (r *trustRig) serve(ctx context.Context) (<-chan error, *syncBuffer) {
	stderr := &syncBuffer{b: &bytes.Buffer{}}
	f := newFactory(strings.NewReader(""), &bytes.Buffer{}, stderr)
	f.StatePath = r.statePath
	done := make(chan error, 1)
	go func() {
		err := runServe(ctx, f, &serveOptions{Listen: "127.0.0.1:0", Operators: r.ops, MaxSessions: 4, Idle: time.Minute, Rate: 10, Grace: time.Second})
		f.closeAll() // the state file is free once serve is said to have returned
		done <- err
	}()
	return done, stderr
}

// start runs serve until the test ends and waits for its socket.
func (r *trustRig) start(t *testing.T) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, stderr := r.serve(ctx)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	sock := socketPath(r.statePath)
	for start := time.Now(); !sockapi.Available(sock); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the daemon never opened %s: %s", sock, stderr.String())
		}
	}
	return stderr
}

// TestServeRefusesFilesOthersCanWrite: serve does not start when the operators file (or the
// config file) could be written or replaced by someone else; the error names the path, its
// owner and mode, and the fix, and no socket is opened.
func TestServeRefusesFilesOthersCanWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root")
	}
	for _, tc := range []struct {
		name  string
		spoil func(r *trustRig) (blamed string)
		want  []string
	}{
		{"group-writable operators file", func(r *trustRig) string { os.Chmod(r.ops, 0o660); return r.ops },
			[]string{"operators file refused", "mode 0660", "chmod go-w"}},
		{"world-writable operators file", func(r *trustRig) string { os.Chmod(r.ops, 0o666); return r.ops },
			[]string{"mode 0666", "writable by group or others"}},
		{"operators file in a world-writable directory", func(r *trustRig) string {
			os.Chmod(filepath.Dir(r.ops), 0o777)
			return filepath.Dir(r.ops)
		}, []string{"directory", "mode 0777", "which holds", "operators.yaml"}},
		{"operators file owned by another user", func(r *trustRig) string { os.Chown(r.ops, 12345, 12345); return r.ops },
			[]string{"owner uid 12345", "owned by another user", "chown 0"}},
		{"world-writable config file", func(r *trustRig) string {
			cfg := filepath.Join(r.dir, "config", "rangekeeper", "config.yaml")
			os.MkdirAll(filepath.Dir(cfg), 0o755)
			os.WriteFile(cfg, []byte("read_only: false\n"), 0o600)
			os.Chmod(cfg, 0o666)
			return cfg
		}, []string{"config file refused", "mode 0666"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTrustRig(t)
			blamed := tc.spoil(r)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done, _ := r.serve(ctx)
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("serve started with a file others can write")
			}
			if err == nil {
				t.Fatal("serve returned nil; want refused")
			}
			msg := err.Error()
			for _, w := range append([]string{"bad ownership or modes", blamed}, tc.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if sockapi.Available(socketPath(r.statePath)) {
				t.Error("the socket is open")
			}
			// Journaled, when the state directory itself passed.
			db, err := state.Open(r.statePath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			es, _ := db.Journal(state.JournalQuery{})
			if len(es) != 1 || es[0].Action != daemon.ActionLoadOperators || es[0].Outcome != state.OutcomeRefused ||
				es[0].Params["when"] != "start" || !strings.Contains(es[0].Error, blamed) {
				t.Errorf("journal after the refused start: %+v", es)
			}
		})
	}
}

// TestSIGHUPKeepsTheRosterWhenOthersCanWrite is the attack: with the operators file made
// world-writable, a local user appends their key as admin and the daemon gets SIGHUP. The
// reload is refused (said on stderr and journaled, naming the file), the old roster stays in
// force and the new key gets no session. Once the file is owner-only again, SIGHUP loads it.
func TestSIGHUPKeepsTheRosterWhenOthersCanWrite(t *testing.T) {
	r := newTrustRig(t)
	stderr := r.start(t)
	m := regexp.MustCompile(`ssh on (\S+),`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no ssh address in %q", stderr.String())
	}
	addr := m[1]
	sshAs := func(s gossh.Signer) error {
		c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "rk", Auth: []gossh.AuthMethod{gossh.PublicKeys(s)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := sshAs(r.alice); err != nil {
		t.Fatalf("alice, in the roster: %v", err)
	}
	mallory := newTrustSigner(t)
	hup := func(want string) {
		t.Helper()
		before := len(stderr.String())
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		for start := time.Now(); !strings.Contains(stderr.String()[before:], want); time.Sleep(20 * time.Millisecond) {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("after SIGHUP, stderr never said %q: %s", want, stderr.String()[before:])
			}
		}
	}

	for _, spoil := range []struct {
		name   string
		do     func()
		undo   func()
		blamed string
	}{
		{"world-writable file", func() { os.Chmod(r.ops, 0o666) }, func() { os.Chmod(r.ops, 0o600) }, r.ops},
		{"world-writable directory", func() { os.Chmod(filepath.Dir(r.ops), 0o777) }, func() { os.Chmod(filepath.Dir(r.ops), 0o755) }, filepath.Dir(r.ops)},
	} {
		raw, _ := os.ReadFile(r.ops)
		spoil.do()
		os.WriteFile(r.ops, append(raw, operatorEntry("mallory-"+strings.Fields(spoil.name)[0], "admin", mallory)...), 0o666)
		hup("operators file not reloaded")
		if !strings.Contains(stderr.String(), "bad ownership or modes") || !strings.Contains(stderr.String(), spoil.blamed) {
			t.Errorf("%s: the refusal does not name %s: %s", spoil.name, spoil.blamed, stderr.String())
		}
		if err := sshAs(mallory); err == nil {
			t.Errorf("%s: the appended key got a session after SIGHUP", spoil.name)
		}
		if err := sshAs(r.alice); err != nil {
			t.Errorf("%s: the old roster is not in force: %v", spoil.name, err)
		}
		spoil.undo()
		os.WriteFile(r.ops, raw, 0o600) // the owner removes the appended key
	}

	var out, errOut bytes.Buffer
	if code, routed := runRemote([]string{"--state", r.statePath, "journal", "-o", "json"}, strings.NewReader(""), &out, &errOut); !routed || code != 0 {
		t.Fatalf("journal: routed %v, exit %d: %s", routed, code, errOut.String())
	}
	var es []state.Entry
	json.Unmarshal(out.Bytes(), &es)
	refused := 0
	for _, e := range es {
		if e.Action == daemon.ActionLoadOperators && e.Outcome == state.OutcomeRefused && strings.Contains(e.Error, "bad ownership or modes") && e.Target == r.ops {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("journal has %d refused reloads, want 2: %s", refused, out.String())
	}

	// Owner-only again, with mallory added by the owner: the reload is taken.
	raw, _ := os.ReadFile(r.ops)
	os.WriteFile(r.ops, append(raw, operatorEntry("mallory", "viewer", mallory)...), 0o600)
	hup("operators reloaded (2)")
	if err := sshAs(mallory); err != nil {
		t.Errorf("mallory, added by the owner: %v", err)
	}
}

// TestServeRefusesAHelperOthersCouldReplace: the Helm helper the daemon would run for a
// teardown, found in a directory anyone can write (a daemon started in /tmp finds bin/ there),
// stops the start like a bad operators file.
func TestServeRefusesAHelperOthersCouldReplace(t *testing.T) {
	r := newTrustRig(t)
	dir := filepath.Join(r.dir, "bin")
	os.Mkdir(dir, 0o755)
	os.Chmod(dir, 0o777)
	helper := filepath.Join(dir, kubernetes.HelperName)
	os.WriteFile(helper, []byte("#!/bin/sh\n"), 0o755)
	t.Setenv(kubernetes.HelperEnv, helper)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done, _ := r.serve(ctx)
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "Helm helper refused") || !strings.Contains(err.Error(), "directory "+dir) {
		t.Fatalf("serve with the helper in a world-writable directory: %v", err)
	}
}
