package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/daemon"
	"github.com/rangekeeper/rangekeeper/daemon/daemontest"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/state"
)

const opsFile = "operators:\n  - name: alice\n    role: viewer\n    keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\"]\n"

// TestRestartShowsInterruptedActionsToEveryone: an action cut short by the last run (its
// write-ahead record has no outcome) is announced in every session's title at start.
func TestRestartShowsInterruptedActionsToEveryone(t *testing.T) {
	dir := t.TempDir()
	db := daemontest.State(t, dir)
	if err := db.PutPending(state.Pending{ID: 7, Action: "revert", SandboxID: "kubernetes:sim/ns-1/web", Backend: "kubernetes:sim", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	sup := daemontest.Supervisor(t, 0, simfleet.New("sim", backends.KindKubernetes, 10, 0))
	ops := filepath.Join(dir, "operators.yaml")
	os.WriteFile(ops, []byte(opsFile), 0o600)
	d, err := daemon.New(daemon.Options{Supervisor: sup, State: db, NewLayer: daemontest.Layer(sup, db), OperatorsPath: ops, Layer: action.Options{LockDir: filepath.Join(dir, "locks")}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown(context.Background())
	for start := time.Now(); !strings.Contains(d.Notice(), "1 interrupted (revert kubernetes:sim/ns-1/web"); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("notice = %q; want the interrupted revert named", d.Notice())
		}
	}
}

// TestBadOperatorsFileStopsTheDaemon: the daemon does not start on a file it cannot read.
func TestBadOperatorsFileStopsTheDaemon(t *testing.T) {
	dir := t.TempDir()
	ops := filepath.Join(dir, "operators.yaml")
	os.WriteFile(ops, []byte("operators:\n  - name: a\n    role: god\n"), 0o600)
	_, err := daemon.New(daemon.Options{OperatorsPath: ops, NewLayer: daemontest.Layer(nil, nil)})
	if err == nil || !strings.Contains(err.Error(), ops+":3") {
		t.Fatalf("New with a bad role = %v; want an error naming %s:3", err, ops)
	}
}
