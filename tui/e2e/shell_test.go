package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

// The shell end to end, as an operator over SSH: E on a sandbox suspends the workbench into a
// shell with a real TTY (a command's output shows, `stty size` follows the tmux window when it
// is resized), exit returns to the workbench as it was, and the journal has the shell's start
// and end with its exit code and member, and none of what was typed.
func TestShellUnderTmux(t *testing.T) {
	tmux := need(t)
	dockertest.Engine(t)
	dir := t.TempDir()
	bin := buildWorkbench(t)
	project := "inspect-e2eshell-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})

	p := startWorkbench(t, tmux, "rk-e2esh-"+dockertest.RunID, bin, dir, 120, 40)

	p.wait(project, 30*time.Second)
	p.keys("/")
	p.literal("name=" + project)
	p.keys("Enter")
	p.waitRe(regexp.MustCompile(`\b1/\d+ sandboxes`), 10*time.Second)
	before := p.wait("filter:name="+project, 10*time.Second)

	p.keys("E")
	p.wait("/ #", 30*time.Second)
	p.literal("echo typed-$((6*7))")
	p.keys("Enter")
	p.wait("typed-42", 10*time.Second)
	p.literal("stty size")
	p.keys("Enter")
	p.wait("40 120", 10*time.Second)
	p.run("resize-window", "-t", "rk", "-x", "100", "-y", "30")
	time.Sleep(500 * time.Millisecond)
	p.keys("C-l") // a fresh prompt at the top of the smaller window
	p.literal("stty size")
	p.keys("Enter")
	p.wait("30 100", 10*time.Second)
	p.run("resize-window", "-t", "rk", "-x", "120", "-y", "40")
	time.Sleep(500 * time.Millisecond)
	p.literal("exit 3")
	p.keys("Enter")
	after := p.wait("exited 3", 20*time.Second)
	if !strings.Contains(after, "shell "+project+" done") {
		t.Errorf("status line does not report the shell's end:\n%s", after)
	}
	// The workbench is back as it was: the same rows (the status line aside).
	if a, b := table(after), table(before); a != b {
		t.Errorf("screen after the shell differs from before:\n--- before\n%s\n--- after\n%s", b, a)
	}
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
	var intent, outcome *state.Entry
	for i, e := range es {
		for k, v := range e.Params {
			if strings.Contains(v, "typed") || strings.Contains(v, "stty") || strings.Contains(k, "typed") {
				t.Errorf("keystrokes in the journal: %+v", e)
			}
		}
		if e.Action == "shell" && e.Phase == state.PhaseIntent {
			intent = &es[i]
		}
		if e.Action == "shell" && e.Phase == state.PhaseOutcome {
			outcome = &es[i]
		}
	}
	if intent == nil || outcome == nil {
		t.Fatalf("journal lacks the shell's start or end: %+v", es)
	}
	if outcome.Outcome != state.OutcomeOK || outcome.Params["exit_code"] != "3" || outcome.Params["member"] != project+"-default-1" ||
		outcome.Params["shell"] != "sh" || intent.Operator == "" {
		t.Errorf("shell journal: intent %+v outcome %+v", intent, outcome)
	}
}

// table is the screen without its last two lines (status and footer).
func table(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) > 2 {
		lines = lines[:len(lines)-2]
	}
	// The shell is an exec into the sandbox, which the containment watch rightly reports: its
	// alert line ("ALERT …", or "N open alerts; …", in place of the health line) and the row's
	// "!" mark are the only differences.
	var kept []string
	for _, l := range lines {
		if strings.HasPrefix(l, "ALERT ") || strings.Contains(l, "open alerts") || strings.HasPrefix(l, "[ok]") {
			continue
		}
		kept = append(kept, strings.Replace(l, "!+", " +", 1))
	}
	// Other tests' sandboxes come and go on the shared engine: only our filtered count matters.
	return totals.ReplaceAllString(ages.ReplaceAllString(strings.Join(kept, "\n"), "AGE "), "$1/N sandboxes")
}

var totals = regexp.MustCompile(`\b(\d+)/\d+ sandboxes`)

// An age and its padding: "9s    high" and "10s   high" are the same row a second apart.
var ages = regexp.MustCompile(`\b\d+[smh]\b *`)
