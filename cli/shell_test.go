package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

// A shell is refused in read-only mode (exit 2, journaled as refused) and, piped, runs the
// member's shell with the typed input and exits with its code, journaled with the exit code
// and without what was typed.
func TestShellCLIRefusedReadOnlyAndJournaled(t *testing.T) {
	dockertest.Engine(t)
	project := "inspect-cli_shell-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	path := filepath.Join(t.TempDir(), "state.db")
	if _, _, err := run(t, "", "--state", path, "--read-only", "shell", project); exitCode(err) != 2 {
		t.Fatalf("read-only shell: exit %d (%v), want 2", exitCode(err), err)
	}
	out, _, err := run(t, "echo secret-typed-$((40+2)); exit 5\n", "--state", path, "shell", project)
	if exitCode(err) != 5 || !strings.Contains(out, "secret-typed-42") {
		t.Fatalf("piped shell: exit %d (%v), output %q", exitCode(err), err, out)
	}
	db, err := state.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	es, _ := db.Journal(state.JournalQuery{Target: "docker:default/" + project})
	var outcomes []string
	for _, e := range es {
		for _, v := range e.Params {
			if strings.Contains(v, "secret-typed") {
				t.Errorf("keystrokes journaled: %+v", e)
			}
		}
		if e.Phase == state.PhaseOutcome {
			outcomes = append(outcomes, e.Outcome+":"+e.Params["exit_code"])
		}
	}
	if strings.Join(outcomes, " ") != "refused: ok:5" {
		t.Errorf("journal outcomes %v, want a refusal then ok with exit code 5", outcomes)
	}
}
