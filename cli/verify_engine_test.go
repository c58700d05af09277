package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/canary"
)

// TestVerifyCommandOnTheEngine runs `rangekeeper verify` as a user would, on the real engine:
// the hardened spec holds (exit 0) and the same spec with the agent's network routed is weaker
// (exit 1, VFY-EGRESS); both leave nothing with the run label, and each run is in the journal
// (verify and its probes, by the local operator) and in the probe history.
func TestVerifyCommandOnTheEngine(t *testing.T) {
	dockertest.Engine(t)
	buildProbe(t)
	buildHelper(t, canary.BinaryName, canary.EnvBinary)
	verifyTestLabels = dockertest.Labels(nil)
	verifyTestImageRepo = dockertest.ImageRepo("verify-canary")
	t.Cleanup(func() { verifyTestLabels, verifyTestImageRepo = nil, "" })
	img := dockertest.Image(t)
	spec := filepath.Join("..", "verify", "dockerstage", "testdata", "hardened.yaml")
	for _, tc := range []struct {
		name  string
		extra []string
		exit  int
		want  string
	}{
		{"hardened holds", nil, verify.ExitHolds, ""},
		{"routed network is weaker", []string{"--set", "RANGE_INTERNAL=false"}, verify.ExitWeaker, "VFY-EGRESS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			statePath := filepath.Join(dir, "state.db")
			args := append([]string{spec, "--isolate-env", "--set", "IMAGE=" + img, "--expect", "T0.H1.N2", "--fail-on", "critical", "-o", "json",
				"--timeout", "3m"}, tc.extra...)
			stdout, stderr, code, msg := runVerifyCmdAt(t, statePath, args...)
			var res verify.Result
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("output is not a result: %v\n%s\n%s", err, stdout, stderr)
			}
			if code != tc.exit || !strings.Contains(res.Reason+msg, tc.want) {
				t.Fatalf("exit %d (%s) %q; want %d and %q\n%s", code, res.Outcome, res.Reason, tc.exit, tc.want, stderr)
			}
			if !res.Teardown.Remaining.Zero() || res.Teardown.Removed.Containers == 0 {
				t.Errorf("teardown %+v", res.Teardown)
			}
			if !strings.Contains(stderr, "verify: up…") || !strings.Contains(stderr, "verify: probe…") {
				t.Errorf("no progress on stderr:\n%s", stderr)
			}
			db, err := state.Open(statePath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			es, err := db.Journal(state.JournalQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				if e.Operator != state.Operator() {
					t.Errorf("entry by %q: %+v", e.Operator, e)
				}
				got = append(got, e.Action+":"+string(e.Phase))
			}
			if len(got) < 4 || got[0] != "verify:intent" || got[1] != "probe:intent" || got[len(got)-1] != "verify:outcome" {
				t.Errorf("journal %v", got)
			}
			hist, err := verify.History(db, spec, 0)
			if err != nil || len(hist) != 1 || hist[0].RunID != res.RunID || hist[0].Exit != tc.exit {
				t.Errorf("history %d, %v", len(hist), err)
			}
			if recs, err := db.Probes(res.SandboxID, 0); err != nil || len(recs) == 0 {
				t.Errorf("the probe's own history %d, %v", len(recs), err)
			}
		})
	}
}

// runVerifyCmdAt runs `verify` with the state file at statePath and an empty config.
func runVerifyCmdAt(t *testing.T, statePath string, args ...string) (stdout, stderr string, code int, msg string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfg, "")
	return runVerifyWith(t, statePath, cfg, args...)
}
