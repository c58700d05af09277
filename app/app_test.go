package app_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/app"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/demos/simfleet"
	"github.com/rangekeeper/rangekeeper/watch"
)

// newApp is an App over a config whose one Docker endpoint nobody listens on (nothing here
// reaches an engine) and a simulated fleet.
func newApp(t *testing.T, cfg string, o app.Options) *app.App {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("docker:\n  - name: lab\n    host: tcp://127.0.0.1:1\n"+cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	o.ConfigPath, o.StatePath = path, filepath.Join(dir, "state.db")
	o.Extra = append(o.Extra, simfleet.New("simulated", backends.KindKubernetes, 3, time.Hour))
	a := app.New(o)
	t.Cleanup(a.Close)
	return a
}

func TestPartsAreBuiltOnceAndOnlyWhenAsked(t *testing.T) {
	a := newApp(t, "", app.Options{Only: "k8s"})
	if _, err := os.Stat(a.StatePath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the state file exists before anyone asked for it: %v", err)
	}
	bs, err := a.Backends()
	if err != nil || len(bs) != 1 || bs[0].Name() != "k8s:simulated" {
		t.Fatalf("Backends with Only=k8s: %v, %v", bs, err)
	}
	s1, err := a.Supervisor()
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := a.Supervisor(); s2 != s1 {
		t.Error("a second Supervisor call built another supervisor")
	}
	var wg sync.WaitGroup
	ws := make([]*watch.Watcher, 4)
	for i := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); ws[i], _ = a.Watcher(i%2 == 0) }()
	}
	wg.Wait()
	for _, w := range ws {
		if w == nil || w != ws[0] {
			t.Fatalf("concurrent Watcher calls gave %v: want one watch", ws)
		}
	}
	db1, _ := a.State()
	if db2, _ := a.State(); db1 == nil || db2 != db1 {
		t.Error("State opened the file twice")
	}
}

func TestReadOnlyFromTheFlagOrTheConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		flag bool
		want bool
	}{{"", false, false}, {"", true, true}, {"read_only: true\n", false, true}} {
		a := newApp(t, tc.cfg, app.Options{ReadOnly: tc.flag})
		if got := a.ReadOnly(); got != tc.want {
			t.Errorf("config %q, flag %v: ReadOnly %v; want %v", tc.cfg, tc.flag, got, tc.want)
		}
		opts, err := a.LayerOptions(action.LocalIdentity())
		if err != nil || opts.ReadOnly != tc.want {
			t.Errorf("config %q, flag %v: layer options read-only %v (%v); want %v", tc.cfg, tc.flag, opts.ReadOnly, err, tc.want)
		}
	}
}

func TestEvalsOffByConfig(t *testing.T) {
	a := newApp(t, "inspect:\n  disabled: true\n", app.Options{})
	if _, err := a.Evals(); !errors.Is(err, app.ErrEvalsOff) {
		t.Fatalf("Evals with inspect.disabled: %v; want ErrEvalsOff", err)
	}
	b := newApp(t, "inspect:\n  data_dirs: ["+t.TempDir()+"]\n", app.Options{})
	w1, err := b.Evals()
	if err != nil || w1 == nil {
		t.Fatalf("Evals: %v", err)
	}
	if w2, _ := b.Evals(); w2 != w1 {
		t.Error("a second Evals call started another poller")
	}
}

func TestCloseStopsWhatRuns(t *testing.T) {
	a := newApp(t, "", app.Options{Only: "k8s"})
	if _, err := a.Watcher(false); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return: the watch or the supervisor kept running")
	}
	a.Close() // a second Close has nothing left to do
}
