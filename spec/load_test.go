package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// up2 climbs two directories inside a test's temporary repository.
var up2 = strings.Repeat(".."+string(filepath.Separator), 2)

const pinned = "registry.example/evals/base:1.0@sha256:0000000000000000000000000000000000000000000000000000000000000000"

func findingsOf(res Result, id string) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		if f.RuleID == id {
			out = append(out, f)
		}
	}
	return out
}

// TestLoadVariables: ${VAR} forms behave as Compose's, an unset variable without a default is
// named at the line that uses it, `${VAR:?err}` refuses the file naming the variable, file and
// line, and a security key from an unset variable is judged on the worst value.
func TestLoadVariables(t *testing.T) {
	svc := func(lines ...string) string {
		return "services:\n  default:\n    image: " + pinned + "\n" + strings.Join(lines, "\n") + "\n"
	}
	none := svc("    network_mode: none")
	for _, tc := range []struct {
		name      string
		src       string
		env       map[string]string
		v01Line   int    // line of the CMP-V01 finding; 0 for none
		fires     string // another rule that must fire
		quiet     string // a rule that must not fire
		errSubstr string // an InputError must contain this
		errLine   int
	}{
		{name: "unset network_mode is the routed default network", src: svc("    network_mode: ${NM}"), v01Line: 4},
		{name: "set network_mode", src: svc("    network_mode: ${NM}"), env: map[string]string{"NM": "none"}},
		{name: "default when unset", src: svc("    network_mode: ${NM:-none}")},
		{name: "default when unset, dash form", src: svc("    network_mode: ${NM-none}")},
		{name: "empty value takes the :- default", src: svc("    network_mode: ${NM:-none}"), env: map[string]string{"NM": ""}},
		{name: "unset privileged may be true", src: svc("    privileged: ${PRIV}"), v01Line: 4, fires: "CMP-H01"},
		{name: "privileged set false", src: svc("    privileged: ${PRIV}"), env: map[string]string{"PRIV": "false"}, quiet: "CMP-H01"},
		{name: "required variable", src: svc("    network_mode: none", "    environment:", "      TASK: ${TASK_ID:?the task needs an id}"), errSubstr: "TASK_ID", errLine: 6},
		{name: "required, unset form", src: svc("    network_mode: none", "    user: ${RUN_AS?who runs it}"), errSubstr: "RUN_AS", errLine: 5},
		{name: "several required, one line naming them all", src: svc("    network_mode: none", "    user: ${RUN_AS?who runs it}", "    working_dir: ${WD:?where}"), errSubstr: "RUN_AS is required and unset (required variable RUN_AS is missing a value: who runs it); also required: WD;", errLine: 5},
		{name: "required and given", src: svc("    network_mode: ${NM:?pick one}"), env: map[string]string{"NM": "none"}},
		{name: "escaped dollar is no variable", src: svc("    network_mode: none", "    command: [\"sh\", \"-c\", \"echo $$HOME\"]")},
		{name: "$NAME form unset", src: svc("    network_mode: none", "    working_dir: /w/$SUBDIR"), v01Line: 5},
		{name: "unset volume source", src: svc("    network_mode: none", "    volumes:", "      - ${SRC}:/src"), errSubstr: "${SRC}", errLine: 6},
		{name: "HOME from the environment", src: svc("    network_mode: none", "    working_dir: ${HOME}/w"), env: map[string]string{"HOME": "/home/op"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := LintBytes("compose.yaml", []byte(tc.src), Options{Env: tc.env})
			if tc.errSubstr != "" {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("want an InputError, got %v", err)
				}
				if !strings.Contains(ie.Msg, tc.errSubstr) || strings.Contains(ie.Msg, "\n") || ie.File != "compose.yaml" || ie.Line != tc.errLine {
					t.Fatalf("error %q at %s:%d, want %s at line %d", ie.Msg, ie.File, ie.Line, tc.errSubstr, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v01 := findingsOf(res, "CMP-V01")
			switch {
			case tc.v01Line == 0 && len(v01) > 0:
				t.Errorf("unexpected CMP-V01: %+v", v01)
			case tc.v01Line > 0 && (len(v01) != 1 || v01[0].Line != tc.v01Line):
				t.Errorf("want one CMP-V01 at line %d, got %+v", tc.v01Line, v01)
			}
			if tc.fires != "" && len(findingsOf(res, tc.fires)) == 0 {
				t.Errorf("%s did not fire", tc.fires)
			}
			if tc.quiet != "" && len(findingsOf(res, tc.quiet)) != 0 {
				t.Errorf("%s fired", tc.quiet)
			}
		})
	}
	// An unset network_mode is judged exactly as a service without one: the default network.
	unset, err := LintBytes("compose.yaml", []byte(svc("    network_mode: ${NM}")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	absent, _ := LintBytes("compose.yaml", []byte(svc("    read_only: false")), Options{})
	isolated, _ := LintBytes("compose.yaml", []byte(none), Options{})
	if unset.Profile.N != absent.Profile.N || unset.Profile.N == isolated.Profile.N {
		t.Errorf("unset network_mode profile %s; without one %s; none %s", unset.Profile, absent.Profile, isolated.Profile)
	}
	if m := findingsOf(unset, "CMP-V01")[0].Message; !strings.Contains(m, "${NM}") || !strings.Contains(m, "default network") {
		t.Errorf("CMP-V01 message %q", m)
	}
}

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadIncludeAcrossParents: include and extends of files in parent directories inside the
// repository are followed, and findings from them point at the included file and its line;
// without a root (or outside it) they stay refused with the reason.
func TestLoadIncludeAcrossParents(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, repo, map[string]string{
		"common/more/extra.yaml": "services:\n  extra:\n    image: " + pinned + "\n    network_mode: none\n    pid: host\n",
		"common/tools.yaml":      "include:\n  - more/extra.yaml\nservices:\n  tools:\n    image: " + pinned + "\n    network_mode: none\n    privileged: true\n",
		"common/base.yaml": "services:\n  base:\n    image: " + pinned + "\n    network_mode: none\n    cap_add: [SYS_ADMIN]\n" +
			"    volumes:\n      - ./data:/data\n",
		"evals/task/compose.yaml": "include:\n  - " + up2 + "common/tools.yaml\nservices:\n  default:\n    extends:\n      file: " + up2 + "common/base.yaml\n      service: base\n",
	})
	spec := filepath.Join(repo, "evals", "task", "compose.yaml")
	if got := FindRoot(spec); got != repo {
		t.Fatalf("FindRoot = %q, want %q", got, repo)
	}
	res, err := LintFile(spec, Options{Root: repo})
	if err != nil {
		t.Fatal(err)
	}
	if res.File != filepath.Join("evals", "task", "compose.yaml") {
		t.Errorf("result file %q", res.File)
	}
	want := map[string]string{"CMP-H01": "common/tools.yaml:7", "CMP-H06": "common/base.yaml:5", "CMP-H16": "common/more/extra.yaml:5"}
	for id, loc := range want {
		fs := findingsOf(res, id)
		if len(fs) == 0 {
			t.Errorf("%s did not fire; findings %+v", id, res.Findings)
			continue
		}
		if got := fs[0].File + ":" + strconv.Itoa(fs[0].Line); got != filepath.FromSlash(loc) {
			t.Errorf("%s at %s, want %s", id, got, loc)
		}
	}
	for _, f := range res.Findings {
		if strings.Contains(f.Message, repo) || strings.Contains(f.File, repo) {
			t.Errorf("finding carries the absolute path: %+v", f)
		}
	}
	if fs := findingsOf(res, "CMP-H05"); len(fs) == 0 || !strings.Contains(fs[0].Message, "common/data") {
		t.Errorf("bind mount finding does not name the root-relative source: %+v", fs)
	}

	// Without a root the spec's directory is the limit, as before: refused, with the reason.
	_, err = LintFile(spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "outside the project") {
		t.Fatalf("want the outside-the-project refusal, got %v", err)
	}
	// The override still reads it.
	if _, err := LintFile(spec, Options{AllowOutsideProject: true}); err != nil {
		t.Fatalf("--allow-outside-project: %v", err)
	}
}

// TestLoadDetectByName: Inspect's k8s provider reads values.yaml, *-values.yaml and
// helm-values.yaml as Helm values whatever they hold, and the chart's own values.yaml (with
// the nulls Helm accepts) lints without refusal.
func TestLoadDetectByName(t *testing.T) {
	values := "services:\n  default:\n    image: " + pinned + "\n    runtimeClassName: gvisor\n"
	for _, tc := range []struct {
		name string
		src  string
		want Format
	}{
		{"values.yaml", values, FormatHelm},
		{"ctf-values.yaml", values, FormatHelm},
		{"helm-values.yaml", values, FormatHelm},
		{"values.yaml", "services:\n  default:\n    image: " + pinned + "\n    network_mode: none\n", FormatHelm},
		{"compose.yaml", "services:\n  default:\n    image: " + pinned + "\n    network_mode: none\n", FormatCompose},
		{"values.yaml", "vms_config:\n  - vm_template_id: 100\n", FormatProxmox},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := LintBytes(tc.name, []byte(tc.src), Options{})
			if tc.want == FormatHelm && tc.name == "values.yaml" && strings.Contains(tc.src, "network_mode") {
				// network_mode is no agent-env key: Helm's schema refuses it, as Inspect would.
				if err == nil || !strings.Contains(err.Error(), "agent-env values schema") {
					t.Fatalf("want the agent-env schema refusal, got %v", err)
				}
				return
			}
			if err != nil && tc.want != FormatProxmox {
				t.Fatal(err)
			}
			if err == nil && res.Format != tc.want {
				t.Errorf("format %q, want %q", res.Format, tc.want)
			}
		})
	}
	for _, p := range []string{"agent-env.values.yaml", filepath.Join("testdata", "load", "helm-null-values.yaml")} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := LintBytes(p, data, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if res.Format != FormatHelm {
			t.Errorf("%s: format %q", p, res.Format)
		}
	}
}

// TestLoadAgentService: as in Inspect's docker provider, the x-default service is the agent even
// when another is named default.
func TestLoadAgentService(t *testing.T) {
	for _, tc := range []struct {
		src, agent string
	}{
		{"services:\n  default:\n    image: " + pinned + "\n  box:\n    x-default: true\n    image: " + pinned + "\n", "box"},
		{"services:\n  first:\n    image: " + pinned + "\n  default:\n    image: " + pinned + "\n", "default"},
		{"services:\n  first:\n    image: " + pinned + "\n  second:\n    image: " + pinned + "\n", "first"},
	} {
		res, err := LintBytes("compose.yaml", []byte(tc.src), Options{})
		if err != nil {
			t.Fatal(err)
		}
		fs := findingsOf(res, "CMP-R08")
		if len(fs) != 1 || !strings.Contains(fs[0].Message, `"`+tc.agent+`"`) {
			t.Errorf("want the agent %q, got %+v", tc.agent, fs)
		}
	}
}

// TestLoadHomePaths: `~` (compose-go expands it from the user's home, as Compose does) and
// ${HOME} (from the environment lint is given) name the same host path, and a message shows it
// under ~ rather than as this machine's absolute path.
func TestLoadHomePaths(t *testing.T) {
	home := t.TempDir() // a home of its own: the test never depends on the machine's
	t.Setenv("HOME", home)
	dir := t.TempDir()
	for _, src := range []string{"~/.ssh", "${HOME}/.ssh"} {
		data := []byte("services:\n  default:\n    image: " + pinned + "\n    network_mode: none\n    volumes:\n      - " + src + ":/keys\n")
		res, err := LintBytes(filepath.Join(dir, "compose.yaml"), data, Options{Root: dir, Env: map[string]string{"HOME": home}})
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, f := range res.Findings {
			if f.Line == 6 {
				msgs = append(msgs, f.Message)
			}
		}
		joined := strings.Join(msgs, "\n")
		if !strings.Contains(joined, "~/.ssh") || strings.Contains(joined, home+"/") {
			t.Errorf("%s: findings on the mount: %q", src, msgs)
		}
	}
}

// TestLoadRequiredInIncludedFile: a `${VAR:?err}` in an included file is refused at that file
// and line.
func TestLoadRequiredInIncludedFile(t *testing.T) {
	repo := t.TempDir()
	writeTree(t, repo, map[string]string{
		".git/HEAD":            "ref: refs/heads/main\n",
		"common/target.yaml":   "services:\n  target:\n    image: " + pinned + "\n    user: ${TARGET_USER:?the target's user}\n",
		"evals/x/compose.yaml": "include:\n  - " + up2 + "common/target.yaml\nservices:\n  default:\n    image: " + pinned + "\n    network_mode: none\n",
	})
	_, err := LintFile(filepath.Join(repo, "evals", "x", "compose.yaml"), Options{Root: FindRoot(filepath.Join(repo, "evals", "x", "compose.yaml"))})
	var ie *InputError
	if !errors.As(err, &ie) || ie.File != filepath.Join("common", "target.yaml") || ie.Line != 4 || !strings.Contains(ie.Msg, "TARGET_USER") || !strings.Contains(ie.Msg, "the target's user") {
		t.Fatalf("got %v", err)
	}
}

// TestLoadCredentialValuesStayOut: with the operator's real environment, a credential the spec
// takes from it is still judged as the harness's key passed in, and its value is never used.
func TestLoadCredentialValuesStayOut(t *testing.T) {
	const value = "sk-proj-REALVALUEnevershown000000000000"
	src := "services:\n  default:\n    image: " + pinned + "\n    network_mode: none\n    environment:\n      LLM_KEY: ${OPENAI_API_KEY}\n"
	res, err := LintBytes("compose.yaml", []byte(src), Options{Env: map[string]string{"OPENAI_API_KEY": value}})
	if err != nil {
		t.Fatal(err)
	}
	t01 := findingsOf(res, "CMP-T01")
	if len(t01) == 0 || !strings.Contains(t01[0].Message, "OPENAI_API_KEY") {
		t.Errorf("the passed-in model key is not reported by name: %+v", t01)
	}
	for _, f := range res.Findings {
		if strings.Contains(f.Message, "REALVALUE") {
			t.Errorf("a finding carries the value: %+v", f)
		}
	}
}
