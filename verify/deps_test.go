package verify_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoUI keeps verify and its subpackages free of the workbench: the CLI and the TUI both
// drive verify, so it must not depend on either's UI (test imports included).
func TestNoUI(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-deps", "-f", "{{.ImportPath}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list gave %d packages; the check is not biting", len(deps))
	}
	for _, dep := range deps {
		for _, ban := range []string{"github.com/rangekeeper/rangekeeper/tui", "github.com/rangekeeper/rangekeeper/views",
			"charm.land/bubbletea", "charm.land/bubbles", "charm.land/lipgloss"} {
			if dep == ban || strings.HasPrefix(dep, ban+"/") {
				t.Errorf("verify depends on %s", dep)
			}
		}
	}
}
