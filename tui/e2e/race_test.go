package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// raceEnv returns the GORACE setting for a workbench process started by t: the binary is built
// with -race, its reports go to files in a directory of t's, and when t ends every report fails
// the test, except a race between two of Bubble Tea's own goroutines (upstream: tea.Exec's
// RestoreTerminal re-reads the terminal while its SIGWINCH listener does; see dagger/dagger#9419),
// which is logged. exitcode=0 keeps "exited 0" on the pane: the reports are the verdict.
func raceEnv(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "race")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(dir, "report*"))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Error(err)
				continue
			}
			for _, r := range raceReports(string(raw)) {
				if upstreamBubbleTeaRace(r) {
					t.Logf("known Bubble Tea race (not ours):\n%s", firstLines(r, 8))
				} else {
					t.Errorf("data race in the workbench:\n%s", r)
				}
			}
		}
	})
	return "GORACE=log_path=" + filepath.Join(dir, "report") + " exitcode=0"
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

const raceBanner = "WARNING: DATA RACE"

// raceReports splits a race detector log into its reports.
func raceReports(log string) []string {
	var out []string
	for _, part := range strings.Split(log, "==================") {
		if strings.Contains(part, raceBanner) {
			out = append(out, strings.TrimSpace(part))
		}
	}
	return out
}

// upstreamBubbleTeaRace reports whether both conflicting accesses of a race report happen in
// Bubble Tea's own code (the innermost frame under "Read at", "Write at", "Previous …").
func upstreamBubbleTeaRace(report string) bool {
	lines := strings.Split(report, "\n")
	accesses := 0
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if !(strings.HasPrefix(l, "Read at") || strings.HasPrefix(l, "Write at") || strings.HasPrefix(l, "Previous ")) {
			continue
		}
		accesses++
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "charm.land/bubbletea/v2.") {
			return false
		}
	}
	return accesses == 2
}

func TestUpstreamBubbleTeaRaceIsTheOnlyOneTolerated(t *testing.T) {
	theirs := `WARNING: DATA RACE
Read at 0x00c000370308 by goroutine 28:
  charm.land/bubbletea/v2.(*Program).checkResize()
      /m/charm.land/bubbletea/v2@v2.1.1/tty.go:150 +0x3c
  charm.land/bubbletea/v2.(*Program).listenForResize()

Previous write at 0x00c000370308 by goroutine 7:
  charm.land/bubbletea/v2.(*Program).initInput()
      /m/charm.land/bubbletea/v2@v2.1.1/tty_unix.go:31 +0x228
`
	ours := strings.Replace(theirs, "charm.land/bubbletea/v2.(*Program).initInput()", "github.com/rangekeeper/rangekeeper/tui.(*Model).Update()", 1)
	log := "==================\n" + theirs + "==================\n==================\n" + ours + "==================\n"
	rs := raceReports(log)
	if len(rs) != 2 {
		t.Fatalf("found %d reports, want 2", len(rs))
	}
	if !upstreamBubbleTeaRace(rs[0]) {
		t.Error("a race inside Bubble Tea is not recognised as upstream")
	}
	if upstreamBubbleTeaRace(rs[1]) {
		t.Error("a race involving our code is tolerated")
	}
}
