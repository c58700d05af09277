package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// watchSignal is a backend that says when it is first asked to list.
type watchSignal struct{ listed chan struct{} }

func (watchSignal) Name() string        { return "docker:signal" }
func (watchSignal) Kind() backends.Kind { return backends.KindDocker }
func (w watchSignal) Watch(ctx context.Context, emit func(backends.Event)) error {
	close(w.listed)
	<-ctx.Done()
	return ctx.Err()
}

func gatedFactory(t *testing.T) (*factory, watchSignal) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("docker:\n  - name: none\n    host: tcp://127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFactory(strings.NewReader(""), io.Discard, io.Discard)
	f.StatePath, f.ConfigPath = filepath.Join(dir, "state.db"), cfg
	w := watchSignal{listed: make(chan struct{})}
	f.extraBackends = []backends.Backend{w}
	return f, w
}

// The workbench's backends list once its cache is read (supervisorAfter), not beside the decode.
func TestSupervisorWaitsForItsGate(t *testing.T) {
	f, w := gatedFactory(t)
	gate := make(chan struct{})
	f.supervisorAfter = gate
	if _, err := f.Supervisor(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.listed:
		t.Fatal("a backend listed before the gate opened")
	case <-time.After(200 * time.Millisecond):
	}
	close(gate)
	select {
	case <-w.listed:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend never listed after the gate opened")
	}
	f.closeAll()
}

// A command that ends before the gate opens still closes (its supervisor never started).
func TestSupervisorWithAShutGateCloses(t *testing.T) {
	f, w := gatedFactory(t)
	f.supervisorAfter = make(chan struct{})
	if _, err := f.Supervisor(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { f.closeAll(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("closeAll waited for a gate that never opened")
	}
	select {
	case <-w.listed:
		t.Fatal("a backend listed although the gate never opened")
	default:
	}
}

// The workbench reads its cache before its backends list: the state file's cache is on the
// program's Open result, and the backends wait for it.
func TestWorkbenchBackendsListAfterTheCacheIsRead(t *testing.T) {
	f, w := gatedFactory(t)
	m, _, err := newWorkbench(f)
	if err != nil || m == nil {
		t.Fatalf("newWorkbench: %v", err)
	}
	if f.supervisorAfter == nil {
		t.Fatal("the workbench's supervisor is not held back by its cache read")
	}
	select {
	case <-w.listed:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend never listed once the (empty) cache was read")
	}
	f.closeAll()
}
