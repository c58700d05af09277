package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/spec/report"
)

const lintPinned = "registry.example/evals/base:1.0@sha256:0000000000000000000000000000000000000000000000000000000000000000"

// runLintEnv is runLintCmd with the process environment lint sees.
func runLintEnv(t testing.TB, environ []string, args ...string) (stdout string, code int, msg string) {
	t.Helper()
	return runLintWith(t, func(f *factory) { f.Environ = func() []string { return environ } }, args...)
}

// runLintWith runs the lint command on a test factory (adjusted by setup, when given) and
// returns its stdout, exit status and the message of a non-zero exit.
func runLintWith(t testing.TB, setup func(*factory), args ...string) (stdout string, code int, msg string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
	if setup != nil {
		setup(f)
	}
	cmd := newLintCmd(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	if err == nil {
		return out.String(), 0, ""
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		t.Fatalf("lint returned a non-exit error: %v", err)
	}
	return out.String(), ee.code, ee.msg
}

// fakeRepo makes a directory with a .git entry and the given files.
func fakeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(repo, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

type lintJSON struct {
	Results []struct {
		File     string
		Format   string
		Findings []struct {
			RuleID  string
			File    string
			Line    int
			Message string
		}
	}
	Refused []struct {
		File    string
		Line    int
		Message string
	}
}

func decodeLint(t *testing.T, out string) lintJSON {
	t.Helper()
	var d lintJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return d
}

func (d lintJSON) has(id string) bool {
	for _, r := range d.Results {
		for _, f := range r.Findings {
			if f.RuleID == id {
				return true
			}
		}
	}
	return false
}

// TestLintVariablePrecedence: --set over the process environment over the env files, the .env
// beside the spec by default, as docker compose takes them.
func TestLintVariablePrecedence(t *testing.T) {
	repo := fakeRepo(t, map[string]string{
		"task/compose.yaml": "services:\n  default:\n    image: " + lintPinned + "\n    network_mode: ${NM}\n    privileged: ${PRIV}\n",
		"task/.env":         "NM=host\nPRIV=false\n",
		"task/isolated.env": "NM=none\n",
	})
	spec := filepath.Join(repo, "task", "compose.yaml")
	other := filepath.Join(repo, "task", "isolated.env")
	for _, tc := range []struct {
		name     string
		environ  []string
		args     []string
		hostNet  bool // CMP-N01: network_mode resolved to host
		priv     bool // CMP-H01: privileged resolved (or judged) true
		unsetVar bool // CMP-V01
	}{
		{"the .env beside the spec", nil, nil, true, false, false},
		{"--env-file replaces .env", nil, []string{"--env-file", other}, false, true, true},
		{"the environment wins over the env file", []string{"NM=none"}, nil, false, false, false},
		{"--set wins over the environment", []string{"NM=none"}, []string{"--set", "NM=host"}, true, false, false},
		{"--set PRIV", nil, []string{"--env-file", other, "--set", "PRIV=true"}, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, msg := runLintEnv(t, tc.environ, append(append([]string{"-o", "json"}, tc.args...), spec)...)
			d := decodeLint(t, out)
			if len(d.Refused) > 0 {
				t.Fatalf("refused: %+v (%s)", d.Refused, msg)
			}
			if d.has("CMP-N01") != tc.hostNet || d.has("CMP-H01") != tc.priv || d.has("CMP-V01") != tc.unsetVar {
				t.Errorf("N01 %v H01 %v V01 %v; want %v %v %v", d.has("CMP-N01"), d.has("CMP-H01"), d.has("CMP-V01"), tc.hostNet, tc.priv, tc.unsetVar)
			}
		})
	}
	if _, code, msg := runLintEnv(t, nil, "--set", "NOEQUALS", spec); code != 2 || !strings.Contains(msg, "KEY=VALUE") {
		t.Errorf("bad --set: exit %d %q", code, msg)
	}
	if _, code, msg := runLintEnv(t, nil, "--env-file", filepath.Join(repo, "missing.env"), spec); code != 2 || !strings.Contains(msg, "missing.env") {
		t.Errorf("missing --env-file: exit %d %q", code, msg)
	}
	// A broken .env beside a spec refuses that spec, named relative to the repository, its
	// content unquoted.
	if err := os.WriteFile(filepath.Join(repo, "task", ".env"), []byte("NM=host\nTOKEN=\"sekrit\nBAD LINE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code, msg := runLintEnv(t, nil, "-o", "json", spec)
	d := decodeLint(t, out)
	if code != 2 || len(d.Refused) != 1 || d.Refused[0].File != "task/.env" || strings.Contains(out+msg, "sekrit") || strings.Contains(out+msg, repo) {
		t.Errorf("broken .env: exit %d, refused %+v, %q", code, d.Refused, msg)
	}
}

// TestLintRequiredVariable: ${VAR:?err} without a value refuses the file, naming the variable,
// the file (relative to the repository) and the line.
func TestLintRequiredVariable(t *testing.T) {
	repo := fakeRepo(t, map[string]string{
		"evals/ctf/compose.yaml": "services:\n  default:\n    image: " + lintPinned + "\n    network_mode: none\n    working_dir: ${WORKDIR:?set the task directory}\n",
	})
	out, code, msg := runLintEnv(t, nil, "-o", "json", filepath.Join(repo, "evals", "ctf", "compose.yaml"))
	if code != 2 || !strings.HasPrefix(msg, "evals/ctf/compose.yaml:5:") || !strings.Contains(msg, "WORKDIR") || !strings.Contains(msg, "set the task directory") {
		t.Fatalf("exit %d, message %q", code, msg)
	}
	d := decodeLint(t, out)
	if len(d.Refused) != 1 || d.Refused[0].File != "evals/ctf/compose.yaml" || d.Refused[0].Line != 5 {
		t.Errorf("refused: %+v", d.Refused)
	}
}

// TestLintDirectory: a directory argument is walked for the spec files a user means (not .git,
// not vendor), every refused file is an entry in JSON and a notification in SARIF, and no
// output carries the machine's absolute paths.
func TestLintDirectory(t *testing.T) {
	repo := fakeRepo(t, map[string]string{
		"evals/a/compose.yaml":           "services:\n  default:\n    image: " + lintPinned + "\n    network_mode: none\n",
		"evals/b/values.yaml":            "services:\n  default:\n    image: " + lintPinned + "\n    runtimeClassName: gvisor\n",
		"evals/c/README.md":              "# not a spec\n",
		"evals/d/docker-compose.yml":     "services:\n  default:\n    image: " + lintPinned + "\n    network_mode: none\n    working_dir: ${W:?needed}\n",
		"evals/e/helm-values.yaml":       "services: [\n",
		"vendor/x/compose.yaml":          "services: [\n",
		".git/compose.yaml":              "services: [\n",
		"evals/a/notes/unrelated.yaml":   "a: b\n",
		"evals/g/my-secret-compose.yaml": "services:\n  default:\n    image: " + lintPinned + "\n    network_mode: none\n    user: ${RUN_AS:?who}\n",
		"evals/f/my-secret-compose.yml":  "services:\n  default:\n    image: " + lintPinned + "\n    network_mode: host\n",
	})
	// The walk takes compose*.y*ml; a file named otherwise is linted when named.
	secret := filepath.Join(repo, "evals", "f", "my-secret-compose.yml")
	refusedSecret := filepath.Join(repo, "evals", "g", "my-secret-compose.yaml")
	out, code, msg := runLintEnv(t, nil, "-o", "json", repo, secret, refusedSecret)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (refused files); %s", code, msg)
	}
	d := decodeLint(t, out)
	var files []string
	for _, r := range d.Results {
		files = append(files, r.File)
	}
	if strings.Join(files, " ") != "evals/a/compose.yaml evals/b/values.yaml evals/f/my-secret-compose.yml" {
		t.Errorf("linted %v", files)
	}
	if len(d.Refused) != 3 || d.Refused[0].File != "evals/d/docker-compose.yml" || d.Refused[0].Line != 5 ||
		d.Refused[1].File != "evals/e/helm-values.yaml" || d.Refused[1].Line != 1 ||
		d.Refused[2].File != "evals/g/my-secret-compose.yaml" || d.Refused[2].Line != 5 {
		t.Errorf("refused %+v", d.Refused)
	}
	if d.Results[1].Format != "helm" {
		t.Errorf("values.yaml read as %s", d.Results[1].Format)
	}
	// A file name with "secret" in it keeps its line numbers everywhere, stderr included.
	var n01 int
	for _, f := range d.Results[2].Findings {
		if f.RuleID == "CMP-N01" {
			n01 = f.Line
		}
	}
	if n01 != 4 {
		t.Errorf("CMP-N01 in my-secret-compose.yml at line %d", n01)
	}
	text, _, msg := runLintEnv(t, nil, repo, secret, refusedSecret)
	if !strings.Contains(text, "evals/f/my-secret-compose.yml:4:") || !strings.Contains(text, "evals/d/docker-compose.yml:5:") || !strings.Contains(text, "3 file(s) refused") {
		t.Errorf("text output:\n%s", text)
	}
	// What main prints: the redacted message, which keeps the secret-named file's position.
	if shown := redact.Message(msg); !strings.Contains(shown, "evals/d/docker-compose.yml:5:") || !strings.Contains(shown, "evals/g/my-secret-compose.yaml:5:") {
		t.Errorf("stderr message %q", shown)
	}

	sarif, _, _ := runLintEnv(t, nil, "-o", "sarif", repo, secret, refusedSecret)
	var log struct {
		Runs []struct {
			Invocations []struct {
				ExecutionSuccessful        bool
				ToolExecutionNotifications []struct {
					Level     string
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string }
							Region           struct{ StartLine int }
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(sarif), &log); err != nil {
		t.Fatal(err)
	}
	inv := log.Runs[0].Invocations
	if len(inv) != 1 || inv[0].ExecutionSuccessful || len(inv[0].ToolExecutionNotifications) != 3 {
		t.Fatalf("invocations %+v", inv)
	}
	if n := inv[0].ToolExecutionNotifications[0]; n.Level != "error" || n.Locations[0].PhysicalLocation.ArtifactLocation.URI != "evals/d/docker-compose.yml" || n.Locations[0].PhysicalLocation.Region.StartLine != 5 {
		t.Errorf("notification %+v", n)
	}
	for name, o := range map[string]string{"json": out, "text": text, "sarif": sarif, "stderr": msg} {
		if strings.Contains(o, repo) {
			t.Errorf("%s output carries the absolute path %s", name, repo)
		}
	}

	// A directory without specs is refused, not passed as clean.
	empty := t.TempDir()
	if _, code, msg := runLintEnv(t, nil, empty); code != 2 || !strings.Contains(msg, "no spec files") {
		t.Errorf("empty directory: exit %d %q", code, msg)
	}
}

// TestLintRootFlag: --root widens what include may read and what paths are relative to.
func TestLintRootFlag(t *testing.T) {
	top := t.TempDir() // no .git: the root is only what --root says
	files := map[string]string{
		"base/base.yaml":      "services:\n  base:\n    image: " + lintPinned + "\n    network_mode: none\n    privileged: true\n",
		"task/compose.yaml":   "services:\n  default:\n    extends:\n      file: ../base/base.yaml\n      service: base\n",
		"task/other/ok.yaml":  "a: b\n",
		"task/other/.keepme":  "",
		"task/other/sub/x.md": "",
	}
	for p, c := range files {
		full := filepath.Join(top, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spec := filepath.Join(top, "task", "compose.yaml")
	out, code, msg := runLintEnv(t, nil, "-o", "json", "--root", top, spec)
	if code != 1 {
		t.Fatalf("exit %d %q", code, msg)
	}
	d := decodeLint(t, out)
	found := false
	for _, f := range d.Results[0].Findings {
		if f.RuleID == "CMP-H01" {
			found = f.File == "base/base.yaml" && f.Line == 5
		}
	}
	if !found || d.Results[0].File != "task/compose.yaml" {
		t.Errorf("results %+v", d.Results)
	}
	if _, code, msg := runLintEnv(t, nil, "--root", filepath.Join(top, "task"), spec); code != 2 || !strings.Contains(msg, "outside the project") {
		t.Errorf("outside --root: exit %d %q", code, msg)
	}
}

// TestLintDirectoryJudgesFragmentsThroughTheirIncluders: a walked file another spec includes
// (a shared target service with a database password, whose first service would be guessed to
// be the agent) is judged through the spec that includes it, not alone; named on the command
// line it is judged alone, as asked.
func TestLintDirectoryJudgesFragmentsThroughTheirIncluders(t *testing.T) {
	repo := fakeRepo(t, map[string]string{
		"task/compose.yaml":         "include:\n  - ../common/compose-target.yml\nservices:\n  default:\n    image: " + lintPinned + "\n    network_mode: none\n",
		"common/compose-target.yml": "services:\n  target:\n    image: " + lintPinned + "\n    privileged: true\n    environment:\n      WORDPRESS_DB_PASSWORD: hunter2hunter2hunter2\n",
	})
	out, code, msg := runLintEnv(t, nil, "-o", "json", repo)
	if code != 1 {
		t.Fatalf("exit %d %s", code, msg)
	}
	var doc report.JSONDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 1 || doc.Results[0].File != "task/compose.yaml" {
		t.Fatalf("results %+v", doc.Results)
	}
	want := []report.Fragment{{File: "common/compose-target.yml", IncludedBy: "task/compose.yaml"}}
	if !reflect.DeepEqual(doc.Fragments, want) || doc.Summary.Fragments != 1 {
		t.Errorf("fragments %+v summary %+v", doc.Fragments, doc.Summary)
	}
	privileged := false
	for _, f := range doc.Results[0].Findings {
		if f.RuleID == "CMP-H01" {
			privileged = f.File == "common/compose-target.yml" && f.Line == 4
		}
		if f.Severity == catalog.SeverityCritical && f.RuleID != "CMP-H01" {
			t.Errorf("a target's fixture judged as the agent's: %+v", f)
		}
	}
	if !privileged {
		t.Errorf("the fragment's privileged target is not reported in it through its includer: %+v", doc.Results[0].Findings)
	}
	text, _, _ := runLintEnv(t, nil, repo)
	if !strings.Contains(text, "common/compose-target.yml  judged through task/compose.yaml") || !strings.Contains(text, "1 fragment(s)") {
		t.Errorf("text output:\n%s", text)
	}
	// Named, it is linted on its own.
	out, _, _ = runLintEnv(t, nil, "-o", "json", "--root", repo, filepath.Join(repo, "common", "compose-target.yml"))
	var named report.JSONDoc
	if err := json.Unmarshal([]byte(out), &named); err != nil || len(named.Results) != 1 || len(named.Fragments) != 0 || len(named.Results[0].Includes) != 0 {
		t.Errorf("named fragment: %v %+v", err, named)
	}
}
