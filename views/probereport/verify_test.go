package probereport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
	"github.com/rangekeeper/rangekeeper/verify"
)

// verifyFixture is a result verify/render keeps as its own golden (a real run's JSON).
func verifyFixture(t *testing.T, name string) verify.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "verify", "render", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r verify.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestVerifyGolden: a verify run in the report view heads the agent's verdicts with the outcome,
// expected and measured profile, the weaker axis, the reached canaries with their evidence and
// the time per step; a run that held says so; a run that stopped before the probe says why.
func TestVerifyGolden(t *testing.T) {
	for _, name := range []string{"routed-network", "hardened"} {
		t.Run(name, func(t *testing.T) {
			res := verifyFixture(t, name)
			m := ForVerify(res)
			raw := m.View(ctx(120, 40))
			got := ansi.Strip(raw)
			if got, ok := m.Verify(); !ok || got.RunID != res.RunID {
				t.Errorf("Verify() = %v", ok)
			}
			for _, want := range []string{"Verify  " + res.Spec, strings.ToUpper(res.Outcome), "measured " + res.Measured.String(), "steps: lint"} {
				if !strings.Contains(got, want) {
					t.Errorf("view lacks %q:\n%s", want, got)
				}
			}
			goldentest.Assert(t, "verify-"+name+"-120x40", raw)
		})
	}
	t.Run("not probed", func(t *testing.T) {
		res := verifyFixture(t, "hardened")
		res.Probes, res.Exit, res.Outcome, res.Reason = nil, verify.ExitCouldNotRun, "could not verify", "deadline of 5m0s reached during wait"
		got := ansi.Strip(ForVerify(res).View(ctx(100, 12)))
		if !strings.Contains(got, "COULD NOT VERIFY") || !strings.Contains(got, "not probed: deadline of 5m0s reached during wait") {
			t.Fatalf("view:\n%s", got)
		}
	})
}
