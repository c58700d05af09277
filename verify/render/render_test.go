package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rangekeeper/rangekeeper/verify"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The fixtures are results of real runs on the engine (verify/dockerstage -update).
var fixtures = []string{"hardened", "routed-network", "network_mode-bridge", "scorer-on-the-agents-network"}

func load(t *testing.T, name string) verify.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r verify.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (run go test -update and review the diff)\n--- got ---\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	for _, name := range fixtures {
		r := load(t, name)
		for _, out := range []struct {
			ext   string
			write func(*bytes.Buffer) error
		}{
			{"txt", func(b *bytes.Buffer) error { return Text(b, r, TextOptions{}) }},
			{"color.txt", func(b *bytes.Buffer) error { return Text(b, r, TextOptions{Color: true}) }},
			{"sarif", func(b *bytes.Buffer) error { return SARIF(b, r, SARIFOptions{Version: "test"}) }},
			{"junit.xml", func(b *bytes.Buffer) error { return JUnit(b, r) }},
		} {
			var b bytes.Buffer
			if err := out.write(&b); err != nil {
				t.Fatalf("%s.%s: %v", name, out.ext, err)
			}
			golden(t, name+"."+out.ext, b.Bytes())
		}
	}
}

// TestText: the reached check shows its canary evidence, the outcome is in words, and the
// steps add up.
func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, load(t, "routed-network"), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"WEAKER", "N     N2        N0        WEAKER", "reached     VFY-EGRESS", "canary logged a connection", "steps: lint", "nothing left with the run label"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestSARIFValidatesAndPoints(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(filepath.Join("..", "..", "spec", "report", "testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range fixtures {
		r := load(t, name)
		var b bytes.Buffer
		if err := SARIF(&b, r, SARIFOptions{Version: "test"}); err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("%s: SARIF does not validate: %v", name, err)
		}
		var log struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []struct{ ID string } `json:"rules"`
					} `json:"driver"`
				} `json:"tool"`
				Results []struct {
					RuleID    string `json:"ruleId"`
					RuleIndex int    `json:"ruleIndex"`
					Locations []struct {
						PhysicalLocation struct {
							Region struct{ StartLine int } `json:"region"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(b.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		run := log.Runs[0]
		nonLint := 0
		for _, f := range r.Findings {
			if f.Source != "lint" {
				nonLint++
			}
		}
		if len(run.Results) != len(r.Findings)+len(r.Lint.Suppressed) {
			t.Errorf("%s: %d SARIF results for %d findings (+%d suppressed)", name, len(run.Results), len(r.Findings), len(r.Lint.Suppressed))
		}
		for _, res := range run.Results {
			if run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID || res.Locations[0].PhysicalLocation.Region.StartLine < 1 {
				t.Errorf("%s: result %s points at rule %d / line %d", name, res.RuleID, res.RuleIndex, res.Locations[0].PhysicalLocation.Region.StartLine)
			}
		}
		if name != "hardened" && nonLint == 0 {
			t.Errorf("%s: no probe or verify finding to show", name)
		}
	}
}

func TestJUnitCounts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int
	}{{"hardened", 0}, {"routed-network", 3}, {"scorer-on-the-agents-network", 3}} {
		var b bytes.Buffer
		if err := JUnit(&b, load(t, tc.name)); err != nil {
			t.Fatal(err)
		}
		var doc junitSuites
		if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := doc.Suites[0]
		failed := 0
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed++
			}
		}
		if s.Failures != failed || doc.Failures != failed || s.Tests != len(s.Cases) || failed != tc.failures {
			t.Errorf("%s: suite says %d failures / %d tests, cases have %d failures of %d, want %d", tc.name, s.Failures, s.Tests, failed, len(s.Cases), tc.failures)
		}
	}
}
