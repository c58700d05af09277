// Package rangekeeper_test holds repository-wide tests: the dependency rules that keep the
// layers one-way.
package rangekeeper_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rangekeeper/rangekeeper"

// forbidden maps a package prefix to import prefixes none of its packages may depend on,
// directly or transitively.
var forbidden = map[string][]string{
	module + "/backends": {module + "/tui", module + "/views", "charm.land/bubbletea", "charm.land/bubbles", "charm.land/lipgloss"},
	module + "/spec":     {module + "/tui", module + "/views", "charm.land/bubbletea", "charm.land/bubbles", "charm.land/lipgloss"},
	module + "/probe":    {module + "/tui", module + "/views", "charm.land/bubbletea", "charm.land/bubbles", "charm.land/lipgloss"},
	module + "/state":    {module + "/tui", module + "/views", "charm.land/bubbletea", "charm.land/bubbles", "charm.land/lipgloss"},
	module + "/action":   {module + "/tui", module + "/views", "charm.land/bubbletea"},
	module + "/views": {"github.com/moby/moby", "github.com/docker/docker", "k8s.io/client-go", "helm.sh/helm",
		"github.com/luthermonson/go-proxmox"},
}

// exempt lists packages that must pull in a UI by design (the authoring flow lives in views).
var exempt = map[string]bool{}

func TestLayersDependOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-f", "{{.ImportPath}}:{{join .Deps \" \"}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, ok := strings.Cut(line, ":")
		if !ok || exempt[pkg] {
			continue
		}
		for prefix, bans := range forbidden {
			if pkg != prefix && !strings.HasPrefix(pkg, prefix+"/") {
				continue
			}
			checked++
			for _, dep := range strings.Fields(deps) {
				for _, ban := range bans {
					if dep == ban || strings.HasPrefix(dep, ban+"/") {
						t.Errorf("%s depends on %s (forbidden: %s must not depend on %s)", pkg, dep, prefix, ban)
					}
				}
			}
		}
	}
	if checked < 6 {
		t.Fatalf("checked only %d packages; the rule is not biting", checked)
	}
}
