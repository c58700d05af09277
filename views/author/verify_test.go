package author

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/probereport"
	"github.com/rangekeeper/rangekeeper/views/screen"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// fakeVerify stands for the workbench's runner: it checks the snapshot it is given and reports
// steps, pausing after each start until the test lets it go on.
type fakeVerify struct {
	t       *testing.T
	content string
	next    chan struct{}
	seen    chan string // the snapshot path
}

func (f *fakeVerify) run(specPath, as string, progress func(verify.Step)) verify.Result {
	data, err := os.ReadFile(specPath)
	if err != nil || string(data) != f.content {
		f.t.Errorf("snapshot %s: %v; content differs from the buffer", specPath, err)
	}
	if filepath.Dir(specPath) != filepath.Dir(as) {
		f.t.Errorf("snapshot %s not beside %s (relative paths would not resolve)", specPath, as)
	}
	f.seen <- specPath
	res := verify.Result{Spec: as, RunID: "0a1b2c3d", Exit: verify.ExitWeaker, Outcome: "weaker", Reason: "N: expected N2, measured N0",
		Expected: verify.Profile{T: "T0", H: "H1", N: "N2"}, Measured: verify.Profile{T: "T0", H: "H1", N: "N0"}}
	for i, name := range []string{"lint", "load", "up"} {
		s := verify.Step{Name: name}
		progress(s)
		<-f.next
		s.Status, s.DurationMS = "ok", int64(100*(i+1))
		res.Steps = append(res.Steps, s)
		progress(s)
	}
	return res
}

// drive runs cmd (a command reading the verify channel) and feeds its message to the screen,
// returning the next command.
func drive(t *testing.T, s *Screen, c *screen.Context, cmd tea.Cmd) tea.Cmd {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to read the verify run")
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		return s.Update(c, msg)
	case <-time.After(10 * time.Second):
		t.Fatal("the verify run sent nothing")
	}
	return nil
}

// TestAuthorVerify: the verify key runs the runner on a snapshot of the buffer beside its file,
// in a command; the screen shows each step as it starts and ends (Update never waits), and the
// result opens in the probe report view; the snapshot is removed afterwards.
func TestAuthorVerify(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "compose.yaml")
	src := "services:\n  default:\n    image: busybox:1.36\n    network_mode: none\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	fv := &fakeVerify{t: t, content: src, next: make(chan struct{}), seen: make(chan string, 1)}
	s := NewScreen(Options{Path: path, NoColor: true, Verify: fv.run})
	c := &screen.Context{Keys: keymap.Default(), Theme: theme.Plain(), Width: 200, Height: 30}
	s.Update(c, s.Open(c)())     // load the file
	s.Update(c, s.m.lintNow()()) // lint it
	if !strings.Contains(s.View(c), "V verify") {
		t.Errorf("the footer lacks the verify key:\n%s", s.View(c))
	}
	cmd := s.Update(c, tuitest.Key("V"))
	if cmd == nil {
		t.Fatalf("verify key: %s", s.m.status)
	}
	cmd = drive(t, s, c, cmd) // lint started
	snap := <-fv.seen
	if got := s.View(c); !strings.Contains(got, "verify: lint …") {
		t.Fatalf("running step not shown:\n%s", got)
	}
	if again := s.Update(c, tuitest.Key("V")); again != nil || !strings.Contains(s.View(c), "already running") {
		t.Errorf("a second verify started while one runs")
	}
	fv.next <- struct{}{}
	cmd = drive(t, s, c, cmd) // lint done
	cmd = drive(t, s, c, cmd) // load started
	if got := s.View(c); !strings.Contains(got, "verify: lint ✓ 100ms · load …") {
		t.Fatalf("steps not shown:\n%s", got)
	}
	fv.next <- struct{}{}
	cmd = drive(t, s, c, cmd) // load done
	cmd = drive(t, s, c, cmd) // up started
	fv.next <- struct{}{}
	cmd = drive(t, s, c, cmd) // up done
	c.TakeOps()
	if next := drive(t, s, c, cmd); next != nil {
		t.Errorf("the run's last message asked for more")
	}
	ops := c.TakeOps()
	if len(ops) != 1 || ops[0].Push == nil {
		t.Fatalf("ops after the run = %+v; want the report pushed", ops)
	}
	rep, ok := ops[0].Push.(*probereport.Model)
	if !ok {
		t.Fatalf("pushed %T", ops[0].Push)
	}
	if res, ok := rep.Verify(); !ok || res.Spec != path || res.Outcome != "weaker" {
		t.Errorf("report shows %+v", res)
	}
	view := strings.ReplaceAll(s.View(c), path, "compose.yaml")
	if !strings.Contains(view, "verify compose.yaml: weaker (expected T0.H1.N2, measured T0.H1.N0)") {
		t.Errorf("status lacks the summary:\n%s", view)
	}
	goldentest.Assert(t, "verify-done", view)
	deadline := time.Now().Add(5 * time.Second)
	for _, err := os.Stat(snap); err == nil && time.Now().Before(deadline); _, err = os.Stat(snap) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Errorf("snapshot %s left behind: %v", snap, err)
	}
}

// TestAuthorVerifyRefusals: without a runner the key says verify is not available; a Helm
// draft is refused (verify stands up Compose specs); neither starts anything.
func TestAuthorVerifyRefusals(t *testing.T) {
	m := newModel(Options{NoColor: true})
	if _, cmd := m.Update(tuitest.Key("V")); cmd != nil || !strings.Contains(m.status, "not available") {
		t.Errorf("no runner: cmd %v, status %q", cmd != nil, m.status)
	}
	if strings.Contains(m.render(), "V verify") {
		t.Errorf("the verify hint shows without a runner")
	}
	m = newModel(Options{NoColor: true, Verify: func(string, string, func(verify.Step)) verify.Result {
		t.Error("verify ran on a Helm draft")
		return verify.Result{}
	}})
	m.draft["backend"] = backendK8s
	if _, cmd := m.Update(tuitest.Key("V")); cmd != nil || !strings.Contains(m.status, "Compose specs") {
		t.Errorf("helm draft: cmd %v, status %q", cmd != nil, m.status)
	}
}
