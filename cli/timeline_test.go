package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/state"
)

// `rangekeeper timeline <full ID>` reads the state file alone (the sandbox may be gone): a
// table, JSON or YAML, filtered by source; bad flags are bad input.
func TestTimelineCLI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const id = "docker:default/inspect-gone-iabcdef"
	now := time.Now().UTC()
	if err := db.RecordActivity([]sandbox.Activity{{Time: now.Add(-2 * time.Minute), SandboxID: id, Member: "default", Kind: sandbox.ActOOM, Detail: "killed: out of memory"},
		{Time: now.Add(-time.Minute), SandboxID: id, Member: "default", Kind: sandbox.ActDie, Detail: "exited with code 137", Attrs: map[string]string{"exit_code": "137"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(state.Entry{Time: now, Operator: "op@host", Action: "teardown", Target: id, Phase: state.PhaseIntent}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out, stderr, err := run(t, "", "--state", path, "timeline", id)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	oom, die, td := strings.Index(out, "oom"), strings.Index(out, "exited with code 137"), strings.Index(out, "teardown")
	if oom < 0 || die < oom || td < die {
		t.Errorf("table not in order:\n%s", out)
	}
	out, _, err = run(t, "", "--state", path, "timeline", id, "-o", "json", "--source", "backend")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Sandbox string                `json:"sandbox"`
		Entries []state.TimelineEntry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Sandbox != id || len(res.Entries) != 2 || res.Entries[1].Attrs["exit_code"] != "137" {
		t.Errorf("json: %v %+v\n%s", err, res, out)
	}
	out, _, err = run(t, "", "--state", path, "timeline", id, "-o", "yaml", "--source", "journal")
	if err != nil || !strings.Contains(out, "kind: teardown") || strings.Contains(out, "oom") {
		t.Errorf("yaml: %v\n%s", err, out)
	}
	for _, bad := range [][]string{{"timeline", id, "--source", "nope"}, {"timeline", id, "-o", "xml"}, {"timeline", id, "--since", "soon"}} {
		if _, _, err := run(t, "", append([]string{"--state", path}, bad...)...); exitCode(err) != 2 {
			t.Errorf("%v: exit %d, want 2", bad, exitCode(err))
		}
	}
}
