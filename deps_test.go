// Package rangekeeper_test holds repository-wide tests: the dependency rules that keep the
// floors one-way (in the style of tailscale's depaware checks: every rule says why).
package rangekeeper_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rangekeeper/rangekeeper"

var ui = []string{module + "/tui", module + "/views", "charm.land/bubbletea", "charm.land/bubbles", "charm.land/lipgloss"}

// rule forbids packages under pkg to import anything under a banned prefix. Transitive rules
// follow every dependency; direct rules only the package's own imports (cmd may reach the
// views through tui, not import them). Test imports count: a test is code of the package too.
type rule struct {
	pkg    string
	banned []string
	direct bool
	except []string // packages under pkg the rule does not apply to
	allow  []string // imports under a banned prefix the rule permits (a leaf vocabulary)
	why    string
}

var rules = []rule{
	{pkg: module + "/backends", banned: ui, why: "backends talk to engines and clusters; a UI is built on top of them, never inside"},
	{pkg: module + "/spec", banned: ui, why: "the linter runs in CI and the CLI with no terminal"},
	{pkg: module + "/probe", banned: ui, why: "the probe pipeline runs for the CLI, the daemon and the workbench alike"},
	{pkg: module + "/state", banned: append([]string{module + "/backends"}, ui...),
		why: "state persists the sandbox vocabulary (package sandbox); backends are given a snapshot store, so state must not import them back"},
	{pkg: module + "/sandbox", banned: []string{module + "/backends", module + "/state", module + "/action", module + "/tui", module + "/views", module + "/cmd"},
		why: "the vocabulary sits beneath backends and state, importing neither"},
	{pkg: module + "/action", banned: []string{module + "/tui", module + "/views", "charm.land/bubbletea"},
		why: "the one action layer serves the CLI and a daemon as well as the workbench"},
	{pkg: module + "/views", banned: []string{"github.com/moby/moby", "k8s.io/client-go", "helm.sh/helm", "github.com/luthermonson/go-proxmox"},
		why: "views never call a backend SDK: every call goes through backends and the action layer, in a command"},
	{pkg: module + "/views", banned: []string{module + "/tui", module + "/cmd"},
		why: "tui imports the views; keymap, theme and screen are neutral packages under views, so nothing there needs tui"},
	{pkg: module + "/cmd", banned: []string{module + "/views"}, direct: true,
		why: "the CLI reaches screens only through tui, so commands stay testable without a terminal"},
	{pkg: module + "/cli", banned: []string{module + "/views"}, direct: true,
		why: "the commands reach screens only through tui, so they stay testable without a terminal"},
	{pkg: module + "/cmd/rangekeeper", banned: []string{module + "/"}, direct: true, allow: []string{module + "/cli"},
		why: "the binary's main only calls its command package: every command, flag and dependency is wired (and tested) there"},
	{pkg: module + "/internal", banned: []string{module + "/"}, allow: []string{module + "/internal/"},
		why: "internal holds leaves only: small primitives any floor may import, so none of them may import a floor back"},
	{pkg: module + "/app", banned: append([]string{module + "/cli"}, ui...),
		why: "the process's assembly serves commands with no terminal too; the workbench is built over it, never inside"},
	{pkg: module + "/config", banned: []string{module + "/"}, allow: []string{module + "/spec/catalog"},
		why: "config is read by every floor and depends on none of them (a leaf; it may name the rule vocabulary's policy values, itself a leaf)"},
	{pkg: module + "/spec/catalog", banned: []string{module + "/"},
		why: "the rule vocabulary is shared by lint, live posture, the probe and config, so it depends on none of them"},
	{pkg: module + "/internal/redact", banned: []string{module + "/"},
		why: "every floor (state, backends, views, cmd) passes what it writes or shows through redact, so it is a leaf"},
	{pkg: module + "/internal/hostlock", banned: []string{module + "/"},
		why: "the host-wide sandbox lock is a primitive under the action layer, a leaf"},
	{pkg: module + "/internal/inputfirst", banned: []string{module + "/"},
		why: "the operator's input signal is marked by the programs and read by the backends' loads, so it is a leaf both may import"},
	{pkg: module + "/internal/strictmodes", banned: []string{module + "/"},
		why: "the trust check of files that grant power is asked by the daemon and may be asked by any floor that reads such a file, so it is a leaf"},
	{pkg: module + "/internal/staticbin", banned: []string{module + "/"},
		why: "the probe and verify's canary both read their helper binary through it, so it is a leaf"},

	{pkg: module + "/cli", banned: []string{"helm.sh/helm"},
		why: "the Helm SDK's package initialisation cost every workbench start ~26 ms; Helm runs in cmd/rangekeeper-helm, through backends/kubernetes/helmrelease"},

	// Team mode.
	{pkg: module + "/operators", banned: append([]string{module + "/daemon"}, ui...),
		why: "roles are decided at the action layer for every transport; the operators file knows nothing of screens or sessions"},
	{pkg: module + "/daemon/sockapi", banned: append([]string{module + "/daemon/sshd"}, ui...), direct: true,
		why: "the socket serves the CLI's command lines, a JSON event feed and the attached workbench's byte stream; the daemon builds every screen, SSH is a sibling transport"},
	{pkg: module + "/timeline", banned: ui,
		why: "the timeline recorder runs wherever a supervisor and a state file do (the workbench today, a daemon later)"},
	{pkg: module + "/backends/logring", banned: ui,
		why: "the bounded log ring serves the CLI and backend tests as well as the log screen"},

	// The containment watch.
	{pkg: module + "/watch", banned: append([]string{module + "/action", module + "/cmd"}, ui...),
		why: "the containment watch runs beside the supervisor for the workbench, the CLI and a daemon alike; the workbench reads it, never the reverse"},
	{pkg: module + "/inspectlive", banned: []string{module + "/tui", module + "/views", module + "/action", module + "/cmd", module + "/cli", module + "/app", module + "/daemon", "charm.land/bubbletea"},
		why: "live linkage to Inspect's samples is one shared poller the workbench, the CLI and a daemon's sessions read; it shows, never acts, and knows no screen"},
}

type pkgInfo struct {
	ImportPath   string
	ForTest      string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// listPackages is every package of the module with its test variants.
func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-test", "-json=ImportPath,ForTest,Imports,TestImports,XTestImports,Deps", "./...")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// base is the package a (test) variant belongs to: "p [p.test]" and "p_test [p.test]" are p.
func base(p pkgInfo) string {
	path, _, _ := strings.Cut(p.ImportPath, " ")
	if p.ForTest != "" {
		return p.ForTest
	}
	return strings.TrimSuffix(path, "_test")
}

func under(path, prefix string) bool {
	return path == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(path, strings.TrimSuffix(prefix, "/")+"/")
}

// reporter is the part of testing.T the rules need (a recorder in TestRulesBite).
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestRulesBite feeds the rules made-up packages: a test file importing a banned package, a
// direct import the CLI may not have, and a rule whose banned package is gone must each fail.
func TestRulesBite(t *testing.T) {
	pkgs := []pkgInfo{
		{ImportPath: module + "/state"},
		{ImportPath: module + "/state [" + module + "/state.test]", ForTest: module + "/state", Deps: []string{module + "/backends", module + "/sandbox"}},
		{ImportPath: module + "/cmd/rangekeeper", Imports: []string{module + "/tui"}, XTestImports: []string{module + "/views/fleet"},
			Deps: []string{module + "/tui", module + "/views/fleet"}},
		{ImportPath: module + "/views/fleet"},
		{ImportPath: module + "/backends"},
	}
	for _, tc := range []struct {
		r    rule
		want string
	}{
		{rule{pkg: module + "/state", banned: []string{module + "/backends"}, why: "w"}, "state imports " + module + "/backends"},
		{rule{pkg: module + "/cmd", banned: []string{module + "/views"}, direct: true, why: "w"}, "imports " + module + "/views/fleet"},
		{rule{pkg: module + "/state", banned: []string{"github.com/docker/docker"}, why: "w"}, "no longer exists"},
		{rule{pkg: module + "/nothing", banned: []string{module + "/backends"}, why: "w"}, "checked no package"},
	} {
		var rec recorder
		checkRules(&rec, []rule{tc.r}, pkgs)
		if !strings.Contains(strings.Join(rec.errs, "\n"), tc.want) {
			t.Errorf("rule %+v: errors %q, want one saying %q", tc.r, rec.errs, tc.want)
		}
	}
	var rec recorder
	checkRules(&rec, []rule{{pkg: module + "/cmd", banned: []string{module + "/views"}, direct: true, why: "w"}},
		[]pkgInfo{{ImportPath: module + "/cmd/rangekeeper", Imports: []string{module + "/tui"}, Deps: []string{module + "/tui", module + "/views/fleet"}}, {ImportPath: module + "/views/fleet"}})
	if len(rec.errs) != 0 {
		t.Errorf("a direct rule followed a transitive dependency: %q", rec.errs)
	}
}

func TestLayersDependOneWay(t *testing.T) {
	pkgs := listPackages(t)
	checkRules(t, rules, pkgs)
}

// checkRules applies rs to pkgs; it fails on every violation, on a rule that checked nothing and
// on a banned package that no longer exists (a stale rule guards nothing).
func checkRules(t reporter, rs []rule, pkgs []pkgInfo) {
	t.Helper()
	seen := map[string]bool{}
	exists := map[string]bool{}
	for _, p := range pkgs {
		exists[base(p)] = true
		for _, d := range p.Deps {
			exists[d] = true
		}
	}
	for _, r := range rs {
		for _, ban := range r.banned {
			found := false
			for path := range exists {
				if under(path, ban) && !under(path, r.pkg) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("rule %q bans %q, which no longer exists in the build: drop or fix the rule", r.pkg, ban)
			}
		}
		checked := 0
		for _, p := range pkgs {
			owner := base(p)
			if !under(owner, r.pkg) || strings.HasSuffix(p.ImportPath, ".test") {
				continue
			}
			skip := false
			for _, e := range r.except {
				skip = skip || under(owner, e)
			}
			if skip {
				continue
			}
			checked++
			deps := p.Deps
			if r.direct {
				deps = append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...)
			}
			for _, d := range deps {
				d, _, _ = strings.Cut(d, " ")
				allowed := false
				for _, a := range r.allow {
					allowed = allowed || under(d, a)
				}
				for _, ban := range r.banned {
					if under(d, ban) && !under(d, r.pkg) && !allowed {
						msg := owner + " imports " + d + ": " + r.pkg + " ↛ " + ban + ", because " + r.why
						if !seen[msg] {
							seen[msg] = true
							t.Errorf("%s", msg)
						}
					}
				}
			}
		}
		if checked == 0 {
			t.Errorf("rule %q checked no package: the rule is not biting", r.pkg)
		}
	}
}
