// check-outside-paths: plants references on purpose

package rangekeeper_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutsidePathCheckBites runs the `make lint` check on planted files: references to the
// reference folders beside our checkout and to this machine's work area must fail it; ordinary
// in-repository paths must not.
func TestOutsidePathCheckBites(t *testing.T) {
	dir := t.TempDir()
	plant := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, body string
		fails      bool
	}{
		// Assembled, so this source holds no such reference itself; the planted file does.
		{"chart.go", `const chart = "../../../` + `shared/k8s/agent-env/chart"` + "\n", true},
		{"schema.sh", "cat shared/pve-api/pve-api-subset.json\n", true},
		{"abs.mk", "X := /work/shared/sarif/schema.json\n", true},
		{"clean.go", `const chart = "testdata/agent-env/chart" // ./... and ... are fine` + "\n", false},
	}
	for _, c := range cases {
		out, err := exec.Command("hack/check-outside-paths.sh", plant(c.name, c.body)).CombinedOutput()
		if failed := err != nil; failed != c.fails {
			t.Errorf("%s: failed=%v, want %v; output:\n%s", c.name, failed, c.fails, out)
		}
		if c.fails && !strings.Contains(string(out), c.name+":1:") {
			t.Errorf("%s: output does not name the file and line:\n%s", c.name, out)
		}
	}
}
