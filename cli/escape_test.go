package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/state"
)

// hostile is what a member prints to take over the operator's terminal: an OSC 52 clipboard
// write, OSC 0 and 2 title sets, a CSI screen clear and cursor home, a cursor-up line
// overwrite, a C1 CSI (U+009B) and a right-to-left override; then a plain line.
const hostile = `printf '\033]52;c;cm0gLXJmIH4=\007\033]0;owned\007\033]2;owned\007\033[2J\033[H\033[1A\302\233Kfile\342\200\256gpj.exe\tend\nplain line\n'`

// terminalSafe fails the test when out holds a byte that acts on a terminal, and checks the
// sequences are shown, escaped, instead.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\u009b", "\u202e", "\a"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s: the output holds %q: %q", what, bad, out)
		}
	}
	for _, shown := range []string{`\x1b]52;c;`, `\x1b]0;owned\x07`, `\x1b[2J`, `\x1b[1A`, `\x9b`, `\u202e`, "\tend\n", "plain line\n"} {
		if !strings.Contains(out, shown) {
			t.Errorf("%s: the output does not show %q: %q", what, shown, out)
		}
	}
}

// TestMemberOutputIsEscapedThroughTheSocket: exec's output through the daemon's socket, into a
// pipe (not a terminal), shows a member's control sequences escaped; --raw passes them on.
func TestMemberOutputIsEscapedThroughTheSocket(t *testing.T) {
	project, statePath, _ := serveBesideASandbox(t, "esc")
	var out, errOut bytes.Buffer
	code, routed := runRemote([]string{"--state", statePath, "exec", project, "--", "sh", "-c", hostile}, nil, &out, &errOut)
	if !routed || code != 0 {
		t.Fatalf("exec through the socket: routed %v, exit %d: %s", routed, code, errOut.String())
	}
	terminalSafe(t, "exec", out.String())
	out.Reset()
	code, _ = runRemote([]string{"--state", statePath, "exec", project, "--raw", "--", "sh", "-c", hostile}, nil, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "\x1b]52;c;") || !strings.Contains(out.String(), "\u202e") {
		t.Errorf("exec --raw: exit %d, %q; want the bytes as printed", code, out.String())
	}
}

// TestLogsAndTimelineAreEscapedInAPipe: `logs` and `timeline` written to a pipe (the test's
// buffer) show a member's control sequences escaped, one row per entry; --raw prints them.
func TestLogsAndTimelineAreEscapedInAPipe(t *testing.T) {
	dockertest.Engine(t)
	project := "inspect-cli_esclogs-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default", Cmd: []string{"sh", "-c", hostile + "; sleep 3600"}})
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	statePath := filepath.Join(dir, "state.db")
	var out string
	for start := time.Now(); !strings.Contains(out, "plain line"); time.Sleep(200 * time.Millisecond) {
		o, stderr, err := run(t, "", "--state", statePath, "logs", project)
		if err != nil {
			t.Fatalf("logs: %v\n%s", err, stderr)
		}
		if out = o; time.Since(start) > 20*time.Second {
			t.Fatalf("no log lines: %q", out)
		}
	}
	terminalSafe(t, "logs", out)
	raw, _, _ := run(t, "", "--state", statePath, "logs", "--raw", project)
	if !strings.Contains(raw, "\x1b]52;c;") {
		t.Errorf("logs --raw: %q; want the bytes as printed", raw)
	}

	// A recorded entry whose member, actor and detail carry sequences (a sandbox that is gone
	// is named by its full ID: no backend needed).
	id := "docker:local/" + project + "-gone"
	db, err := state.Open(statePath)
	if err != nil {
		t.Fatal(err)
	}
	err = db.RecordActivity([]sandbox.Activity{{Time: time.Now(), SandboxID: id, Kind: sandbox.ActExec,
		Member: "web\x1b]0;owned\x07", Actor: "\u202eroot", Detail: "exec printf \x1b[2J\nfake row"}})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	tl, stderr, err := run(t, "", "--state", statePath, "timeline", id)
	if err != nil {
		t.Fatalf("timeline: %v\n%s", err, stderr)
	}
	for _, bad := range []string{"\x1b", "\u202e"} {
		if strings.Contains(tl, bad) {
			t.Errorf("timeline holds %q: %q", bad, tl)
		}
	}
	if rows := strings.Count(strings.TrimSpace(tl), "\n"); rows != 1 || !strings.Contains(tl, `web\x1b]0;owned\x07`) {
		t.Errorf("timeline: %d rows after the header, want 1 showing the member escaped:\n%s", rows, tl)
	}
	// The recorder escapes some fields as it writes them (the detail's controls); --raw prints
	// the record as it is, the actor's override and the detail's newline included.
	tl, _, _ = run(t, "", "--state", statePath, "timeline", "--raw", id)
	if !strings.Contains(tl, "\u202eroot") || !strings.Contains(tl, "\nfake row") {
		t.Errorf("timeline --raw: %q; want the entry as recorded", tl)
	}
}
