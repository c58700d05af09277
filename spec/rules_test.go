package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// fixtureOptions reads an optional first-line header "# lint: engine=25.0.2 tooling=T1".
func fixtureOptions(t *testing.T, data []byte) Options {
	t.Helper()
	var o Options
	first, _, _ := strings.Cut(string(data), "\n")
	rest, ok := strings.CutPrefix(first, "# lint:")
	if !ok {
		return o
	}
	for _, kv := range strings.Fields(rest) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "engine":
			o.EngineVersion = v
		case "tooling":
			o.Tooling = v
		case "registries":
			o.RegistryAllowlist = strings.Split(v, ",")
		default:
			t.Fatalf("unknown fixture option %q", k)
		}
	}
	return o
}

func ruleIDsOf(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := LintBytes(path, data, fixtureOptions(t, data))
	if err != nil {
		t.Fatalf("lint %s: %v", path, err)
	}
	ids := map[string]int{}
	for _, f := range res.Findings {
		ids[f.RuleID]++
		if f.Line < 1 || f.Column < 1 || f.File != path {
			t.Errorf("%s: finding %s has no position: %+v", path, f.RuleID, f)
		}
	}
	return ids
}

// TestRules runs every registered rule against its firing and non-firing fixtures in
// testdata/rules (<ID>.fire.<ext> / <ID>.pass.<ext>; a rule without both fails the test) and
// against its evasion table (evasions_data_test.go), every entry of which must fire.
func TestRules(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Formats {
		for _, id := range RuleIDs(f) {
			seen[id] = true
		}
	}
	seen["RK-001"], seen["THN-001"] = true, true
	for id := range seen {
		t.Run(id, func(t *testing.T) {
			fires, _ := filepath.Glob(filepath.Join("testdata", "rules", id+".fire.*"))
			passes, _ := filepath.Glob(filepath.Join("testdata", "rules", id+".pass.*"))
			if len(fires) == 0 || len(passes) == 0 {
				t.Fatalf("rule %s needs testdata/rules/%s.fire.* and .pass.* fixtures", id, id)
			}
			for _, p := range fires {
				if ids := ruleIDsOf(t, p); ids[id] == 0 {
					t.Errorf("%s: %s did not fire; got %v", p, id, ids)
				}
			}
			for _, p := range passes {
				if ids := ruleIDsOf(t, p); ids[id] != 0 {
					t.Errorf("%s: %s fired on the non-firing fixture", p, id)
				}
			}
			checkEvasions(t, id)
		})
	}
}

// TestCatalogueComplete checks every rule carries the metadata SARIF and the TUI show.
func TestCatalogueComplete(t *testing.T) {
	for _, r := range catalog.All() {
		if r.Title == "" || r.Message == "" || r.Fix == "" || r.Severity == catalog.SeverityNone || r.Axis == "" || len(r.References) == 0 {
			t.Errorf("rule %s is missing metadata: %+v", r.ID, r)
		}
	}
}
