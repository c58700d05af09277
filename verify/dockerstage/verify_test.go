package dockerstage_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/render"
)

var updateFixture = flag.Bool("update", false, "rewrite the fixtures other packages' tests read (verify/testdata, verify/render/testdata) from real runs")

// saveResult writes a real run's result as a fixture for verify/render's golden tests.
func saveResult(t *testing.T, name string, res verify.Result) {
	t.Helper()
	if !*updateFixture {
		return
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join("..", "render", "testdata", name), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logResult prints the run for the test log (it is secret-free by construction).
func logResult(t *testing.T, res verify.Result) {
	t.Helper()
	b, _ := json.MarshalIndent(struct {
		Exit     int
		Reason   string
		Expected verify.Profile
		Measured verify.Profile
		Axes     []verify.AxisResult
		Checks   []verify.Check
		Steps    []verify.Step
		Notes    []string
	}{res.Exit, res.Reason, res.Expected, res.Measured, res.Axes, res.Checks, res.Steps, res.Notes}, "", "  ")
	t.Logf("%s", b)
}

func check(res verify.Result, id, member string) []verify.Check {
	var out []verify.Check
	for _, c := range res.Checks {
		if c.ID == id && c.Member == member {
			out = append(out, c)
		}
	}
	return out
}

// TestHardenedHolds is the clean case: the agent is on an internal network, the scorer on its
// own. Every check verify owns ran and the agent reached none of the outside ones.
func TestHardenedHolds(t *testing.T) {
	o := options(t, "hardened.yaml", nil)
	o.Expect = "T0.H1.N2"
	res := runSteady(t, o)
	logResult(t, res)
	saveResult(t, "hardened.json", res)
	if res.Exit != verify.ExitHolds || res.Measured.String() != "T0.H1.N2" {
		t.Fatalf("exit %d (%s), measured %s", res.Exit, res.Reason, res.Measured)
	}
	if *updateFixture && len(res.Probes) > 0 && res.Probes[0].Report.Result.Facts != nil {
		b, _ := json.MarshalIndent(res.Probes[0].Report.Result.Facts, "", "  ")
		if err := os.WriteFile(filepath.Join("..", "testdata", "facts-hardened.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The run is judged at --fail-on critical because, until distribution-aware
	// version checks land, the probe reports this machine's Debian runc 1.1.5+ds1-1+deb12u1 as
	// CVE-2024-21626 (SEB-12, HIGH). That must stay the only finding at or above high.
	for _, f := range res.Findings {
		if f.Severity >= catalog.SeverityHigh && f.RuleID != "SEB-12" {
			t.Errorf("unexpected %s finding %s: %s", f.Severity, f.RuleID, f.Message)
		}
	}
	for _, id := range []string{"VFY-EGRESS", "VFY-DNS", "VFY-SCORER"} {
		cs := check(res, id, "default")
		if len(cs) == 0 {
			t.Errorf("%s did not run", id)
		}
		for _, c := range cs {
			if c.Status != verify.NotReached {
				t.Errorf("%s %s: %s %v", id, c.Target, c.Status, c.Evidence)
			}
		}
	}
}

func TestWeakVariantsFail(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		vars       map[string]string
		check      string // the check that must be reached, with canary evidence
		mention    string // what its finding must name
		axis       string // the axis that must come out weaker ("" for none)
	}{
		{"routed network", "hardened.yaml", map[string]string{"RANGE_INTERNAL": "false"}, "VFY-EGRESS", "outside canary", "N"},
		{"network_mode bridge", "bridge.yaml", nil, "VFY-EGRESS", "outside canary", "N"},
		{"scorer on the agent's network", "hardened.yaml", map[string]string{"SCORER_NET": "range"}, "VFY-SCORER", `scorer "scorer"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t, tc.spec, tc.vars)
			o.Expect = "T0.H1.N2"
			res := run(t, o)
			logResult(t, res)
			saveResult(t, strings.NewReplacer(" ", "-", "'", "").Replace(tc.name)+".json", res)
			if res.Exit != verify.ExitWeaker {
				t.Fatalf("exit %d (%s), want %d", res.Exit, res.Reason, verify.ExitWeaker)
			}
			var reached *verify.Check
			for i, c := range check(res, tc.check, "default") {
				if c.Status == verify.Reached {
					reached = &check(res, tc.check, "default")[i]
				}
			}
			if reached == nil {
				t.Fatalf("%s not reached", tc.check)
			}
			if !strings.Contains(strings.Join(reached.Evidence, "\n"), "canary logged a connection") {
				t.Errorf("no evidence from verify's own canary: %v", reached.Evidence)
			}
			found := false
			for _, f := range res.Findings {
				if f.RuleID == tc.check && strings.Contains(f.Message, tc.mention) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s finding naming %q", tc.check, tc.mention)
			}
			for _, a := range res.Axes {
				if a.Axis == tc.axis && !a.Weaker {
					t.Errorf("axis %s not weaker: %+v", a.Axis, a)
				}
			}
			if tc.spec == "bridge.yaml" && len(check(res, "VFY-HOSTGW", "default")) != 0 {
				t.Errorf("verify listened on the default bridge, which it did not create")
			}
		})
	}
}

// TestAllServices probes every service: each gets its own checks and report, the scorer is not
// scored for reaching itself, and only the agent decides the measured profile.
func TestAllServices(t *testing.T) {
	o := options(t, "hardened.yaml", nil)
	o.Expect = "T0.H1.N2"
	o.AllServices = true
	res := runSteady(t, o)
	logResult(t, res)
	if res.Exit != verify.ExitHolds || len(res.Probes) != 3 {
		t.Fatalf("exit %d (%s), %d probe reports", res.Exit, res.Reason, len(res.Probes))
	}
	roles := map[string]string{}
	for _, p := range res.Probes {
		roles[p.Member] = p.Role
		if !p.Report.Probed() {
			t.Errorf("%s not probed: %s", p.Member, p.Report.Result.CouldNotProbe)
		}
	}
	if roles["default"] != "agent" || roles["scorer"] != "scorer" || roles["target"] != "service" {
		t.Errorf("roles %v", roles)
	}
	if len(check(res, "VFY-EGRESS", "target")) != 1 || len(check(res, "VFY-SCORER", "target")) == 0 {
		t.Errorf("target lacks its checks")
	}
	if len(check(res, "VFY-SCORER", "scorer")) != 0 {
		t.Errorf("the scorer was checked against itself")
	}
}

// TestPlantedCredential: the agent gets a model key by name; verify fails naming the variable
// and its value appears nowhere in the result.
func TestPlantedCredential(t *testing.T) {
	const secret = "sk-ant-api03-verify-test-secret-value-0123456789"
	o := options(t, "credential.yaml", map[string]string{"ANTHROPIC_API_KEY": secret})
	o.Expect = "T0.H1.N2"
	res := runSteady(t, o)
	logResult(t, res)
	if res.Exit != verify.ExitWeaker {
		t.Fatalf("exit %d (%s)", res.Exit, res.Reason)
	}
	named := false
	for _, f := range res.Findings {
		if f.Member == "default" && strings.Contains(strings.Join(append(f.Evidence, f.Message), " "), "ANTHROPIC_API_KEY") {
			named = true
		}
	}
	if !named {
		t.Errorf("no finding names ANTHROPIC_API_KEY")
	}
	var all bytes.Buffer
	for _, write := range []func() error{
		func() error { return render.JSON(&all, res) },
		func() error { return render.Text(&all, res, render.TextOptions{Verbose: true}) },
		func() error { return render.SARIF(&all, res, render.SARIFOptions{}) },
		func() error { return render.JUnit(&all, res) },
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(all.String(), secret) || strings.Contains(all.String(), "sk-ant-api03") {
		t.Fatalf("the credential's value is in an output")
	}
	if !strings.Contains(all.String(), "ANTHROPIC_API_KEY") {
		t.Errorf("the outputs do not name the variable")
	}
}
