// Package e2e runs the real rangekeeper binary under tmux against the real Docker engine: it
// types keys with send-keys and reads the screen with capture-pane, like an operator over SSH.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

func TestMain(m *testing.M) {
	dockertest.Main(m, func() {
		if workbench.dir != "" {
			os.RemoveAll(workbench.dir)
		}
	})
}

// need skips without tmux, except in CI where a missing tool must fail the run.
func need(t testing.TB) string {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux required in CI: %v", err)
		}
		t.Skipf("no tmux: %v", err)
	}
	return tmux
}

type pane struct {
	t      testing.TB
	tmux   string
	socket string
}

func (p pane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p pane) keys(ks ...string) { p.run(append([]string{"send-keys", "-t", "rk"}, ks...)...) }

// literal types text without tmux interpreting key names.
func (p pane) literal(s string) { p.run("send-keys", "-t", "rk", "-l", s) }

func (p pane) capture() string { return p.run("capture-pane", "-p", "-t", "rk") }

// wait polls the screen until it contains want.
func (p pane) wait(want string, within time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := p.capture()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never showed %q; last screen:\n%s", want, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitRe is wait with a pattern.
func (p pane) waitRe(re *regexp.Regexp, within time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := p.capture()
		if re.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never matched %s; last screen:\n%s", re, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// workbench is the rangekeeper binary every test in this package runs, built once.
var workbench struct {
	once     sync.Once
	dir, bin string
	err      error
}

// buildWorkbench builds the rangekeeper binary (once for the package's tests) and returns its
// path.
func buildWorkbench(t testing.TB) string {
	t.Helper()
	workbench.once.Do(func() {
		if workbench.dir, workbench.err = os.MkdirTemp("", "rk-e2e-bin-"); workbench.err != nil {
			return
		}
		workbench.bin = filepath.Join(workbench.dir, "rangekeeper")
		// -race, as the tests are built: the binary reuses their compiled packages (without it a
		// cold CI compiles the whole dependency graph once more) and a race fails the test
		// (raceEnv).
		cmd := exec.Command("go", "build", "-race", "-o", workbench.bin, "github.com/rangekeeper/rangekeeper/cmd/rangekeeper")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			workbench.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if workbench.err != nil {
		t.Fatal(workbench.err)
	}
	return workbench.bin
}

// startPane runs shellCmd in a detached w×h tmux session (its own server on socket, removed when
// the test ends), with env added to the environment. The shell keeps the pane after the command
// exits, printing "<what> exited N", so a crash or the exit status stays readable.
func startPane(t testing.TB, tmux, socket string, w, h int, what, shellCmd string, env ...string) pane {
	t.Helper()
	p := pane{t: t, tmux: tmux, socket: socket}
	cmd := exec.Command(tmux, "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "rk", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"sh", "-c", shellCmd+`; echo "`+what+` exited $?"; sleep 60`)
	cmd.Env = append(append(os.Environ(), "TERM=xterm-256color"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	// The server leaves its socket file behind when killed: find it first, remove it after.
	path, _ := exec.Command(tmux, "-L", socket, "display-message", "-p", "#{socket_path}").Output()
	t.Cleanup(func() {
		_ = exec.Command(tmux, "-L", socket, "kill-server").Run()
		if p := strings.TrimSpace(string(path)); p != "" {
			_ = os.Remove(p)
		}
	})
	return p
}

// stateIn is the state file a workbench started by startWorkbench(…, dir, …) uses.
func stateIn(dir string) string { return filepath.Join(dir, "state", "state.db") }

// startWorkbench runs bin in a pane with its state file (stateIn(dir)) and config under dir.
func startWorkbench(t *testing.T, tmux, socket, bin, dir string, w, h int) pane {
	t.Helper()
	return startPane(t, tmux, socket, w, h, "rangekeeper", bin+" --state "+stateIn(dir),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"), raceEnv(t))
}

func TestBinaryUnderTmux(t *testing.T) {
	tmux := need(t)
	cli := dockertest.Engine(t)
	dir := t.TempDir()
	bin := buildWorkbench(t)
	project := "inspect-e2e-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"}, dockertest.Service{Name: "db"})

	p := startWorkbench(t, tmux, "rk-e2e-"+dockertest.RunID, bin, dir, 120, 40)

	p.wait("sandboxes", 20*time.Second)
	p.wait(project, 20*time.Second)

	// Filter down to our sandbox (other tests may run sandboxes on this engine).
	p.keys("/")
	p.literal("name=" + project)
	p.keys("Enter")
	p.waitRe(regexp.MustCompile(`\b1/\d+ sandboxes`), 10*time.Second)

	// Open the detail: members and resource sparklines from the engine's stats. Every step
	// below checks the screen names our project first: other sandboxes may share this engine.
	p.keys("Enter")
	p.wait("docker:default/"+project, 10*time.Second)
	p.wait("MEMBERS (2)", 10*time.Second)
	p.wait("cpu ", 20*time.Second)

	// Snapshot with a name.
	p.keys("s")
	p.wait("name (optional", 5*time.Second)
	p.literal("e2e")
	p.keys("Enter")
	p.wait("snapshot "+project+" done: snapshot e2e", 90*time.Second)

	// Mark the sandbox's default member, then revert and check the mark is gone.
	execIn(t, cli, project+"-default-1", "touch", "/tmp/after-snapshot")
	p.keys("r")
	p.wait("to which snapshot", 20*time.Second)
	p.keys("Enter")
	s := p.wait("[ Cancel ]", 5*time.Second)
	if !strings.Contains(s, "revert "+project) {
		t.Fatalf("confirm dialog does not name the sandbox:\n%s", s)
	}
	p.keys("Tab", "Enter")
	p.wait("revert "+project+" done", 120*time.Second)
	if code := execCode(t, cli, project+"-default-1", "test", "-e", "/tmp/after-snapshot"); code == 0 {
		t.Error("the file written after the snapshot survived the revert")
	}
	p.keys("Escape")
	p.wait("sandboxes", 5*time.Second)
	p.keys("q")
	p.wait("rangekeeper exited 0", 10*time.Second)
	db, err := state.Open(stateIn(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	es, err := db.Journal(state.JournalQuery{Target: "docker:default/" + project})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range es {
		if e.Phase == state.PhaseOutcome {
			got[e.Action] = e.Outcome
		}
	}
	if got["snapshot"] != state.OutcomeOK || got["revert"] != state.OutcomeOK {
		t.Errorf("journal outcomes = %v, want snapshot and revert ok", got)
	}
}

func execIn(t *testing.T, cli *client.Client, ctr string, cmd ...string) {
	t.Helper()
	if code := execCode(t, cli, ctr, cmd...); code != 0 {
		t.Fatalf("%v in %s exited %d", cmd, ctr, code)
	}
}

// execCode runs cmd in a container through the docker CLI-free Engine API and returns its exit code.
func execCode(t *testing.T, cli *client.Client, ctr string, cmd ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cr, err := cli.ExecCreate(ctx, ctr, client.ExecCreateOptions{Cmd: cmd})
	if err != nil {
		t.Fatalf("exec create in %s: %v", ctr, err)
	}
	if _, err := cli.ExecStart(ctx, cr.ID, client.ExecStartOptions{Detach: true}); err != nil {
		t.Fatalf("exec start in %s: %v", ctr, err)
	}
	for {
		res, err := cli.ExecInspect(ctx, cr.ID, client.ExecInspectOptions{})
		if err != nil {
			t.Fatalf("exec inspect: %v", err)
		}
		if !res.Running {
			return res.ExitCode
		}
		time.Sleep(50 * time.Millisecond)
	}
}
