package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/verify"
)

// runVerifyCmd runs `verify` with a hermetic config and state file.
func runVerifyCmd(t *testing.T, config string, args ...string) (stdout, stderr string, code int, msg string) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.yaml"), config)
	return runVerifyWith(t, filepath.Join(dir, "state.db"), filepath.Join(dir, "config.yaml"), args...)
}

// runVerifyWith runs `verify` with the given state file and config.
func runVerifyWith(t *testing.T, statePath, configPath string, args ...string) (stdout, stderr string, code int, msg string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
	f.ConfigPath, f.StatePath = configPath, statePath
	cmd := newVerifyCmd(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	f.closeAll()
	if err == nil {
		return out.String(), errOut.String(), 0, ""
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		t.Fatalf("verify returned a non-exit error: %v", err)
	}
	return out.String(), errOut.String(), ee.code, ee.msg
}

// TestVerifyBadInput: every input mistake is exit 2 with a message naming it, before anything
// is created on an engine (none is needed to run these).
func TestVerifyBadInput(t *testing.T) {
	helm := filepath.Join("..", "demos", "specs", "values-hardened.yaml")
	compose := demo("compose-hardened.yaml")
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"no spec", "", nil, "want SPEC"},
		{"unknown output", "", []string{compose, "-o", "xml"}, `unknown --output "xml" (want text, json, sarif, junit, yaml)`},
		{"spec and --down", "", []string{compose, "--down", "all"}, "exclude each other"},
		{"zero timeout", "", []string{compose, "--timeout", "0s"}, "--timeout 0s"},
		{"unknown severity", "", []string{compose, "--fail-on", "severe"}, `unknown severity "severe"`},
		{"set without a value", "", []string{compose, "--set", "NOVALUE"}, `--set "NOVALUE": want KEY=VALUE`},
		{"set without a name hides the value", "", []string{compose, "--set", "=hunter2"}, `--set "=…": want KEY=VALUE`},
		{"env file missing", "", []string{compose, "--env-file", "nope.env"}, "nope.env"},
		{"spec missing", "", []string{"nope.yaml"}, "nope.yaml"},
		{"not a compose spec", "", []string{helm}, "is a helm spec"},
		{"bad expectation", "", []string{compose, "--expect", "N7"}, `"N7" is not an axis level`},
		{"unknown service", "", []string{compose, "--service", "ghost"}, `--service "ghost": no such service`},
		{"read-only mode", "read_only: true\n", []string{compose}, "refused in read-only mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code, msg := runVerifyCmd(t, tc.config, tc.args...)
			all := stdout + stderr + msg
			if code != 2 || !strings.Contains(all, tc.want) {
				t.Fatalf("exit %d, output %q, want 2 and %q", code, all, tc.want)
			}
			if strings.Contains(all, "hunter2") {
				t.Errorf("a --set value was printed")
			}
			if strings.Contains(stderr, "verify: up") {
				t.Errorf("bad input reached the engine:\n%s", stderr)
			}
		})
	}
}

// TestVerifyEnv: compose's precedence (env file < environment), --set over both, and
// --isolate-env dropping the environment.
func TestVerifyEnv(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "compose.yaml")
	writeFile(t, filepath.Join(dir, ".env"), "SAMPLE_METADATA_FLAG=from-dotenv\nONLY_FILE=file\nSHARED=file\n")
	writeFile(t, filepath.Join(dir, "other.env"), "SHARED=other\n")
	t.Setenv("SHARED", "process")
	t.Setenv("RK_VERIFY_ONLY_PROCESS", "process")
	for _, tc := range []struct {
		name string
		o    verifyOptions
		want map[string]string // "" means absent
	}{
		{"default .env, environment wins", verifyOptions{Spec: spec},
			map[string]string{"SAMPLE_METADATA_FLAG": "from-dotenv", "ONLY_FILE": "file", "SHARED": "process", "RK_VERIFY_ONLY_PROCESS": "process"}},
		{"--env-file replaces .env", verifyOptions{Spec: spec, EnvFiles: []string{filepath.Join(dir, "other.env")}},
			map[string]string{"ONLY_FILE": "", "SHARED": "process"}},
		{"--set wins", verifyOptions{Spec: spec, Set: []string{"SHARED=set", "NEW=a=b"}},
			map[string]string{"SHARED": "set", "NEW": "a=b"}},
		{"--isolate-env", verifyOptions{Spec: spec, IsolateEnv: true},
			map[string]string{"SHARED": "file", "RK_VERIFY_ONLY_PROCESS": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := verifyEnv(&tc.o)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got, ok := env[k]; v == "" && ok || v != "" && got != v {
					t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
				}
			}
		})
	}
}

// TestVerifyParse: flags and arguments land in the options (the runF seam: no engine, no state).
func TestVerifyParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want verifyOptions
	}{
		{"defaults", []string{"compose.yaml"},
			verifyOptions{Spec: "compose.yaml", Output: "text", FailOn: catalog.SeverityHigh, Timeout: verify.DefaultTimeout}},
		{"CI gate", []string{"compose.yaml", "--expect", "T0.H1.N2", "-o", "JUnit", "--fail-on", "critical", "--service", "agent", "--all-services", "--timeout", "90s"},
			verifyOptions{Spec: "compose.yaml", Expect: "T0.H1.N2", Service: "agent", AllServices: true, Output: "junit", FailOn: catalog.SeverityCritical, Timeout: 90 * time.Second}},
		{"yaml, variables, keep", []string{"c.yaml", "-o", "yaml", "--env-file", "a.env", "--set", "K=V", "--set", "SAMPLE_METADATA_FLAG=x", "--keep", "--pull", "--isolate-env", "--no-color"},
			verifyOptions{Spec: "c.yaml", Output: "yaml", FailOn: catalog.SeverityHigh, Timeout: verify.DefaultTimeout, EnvFiles: []string{"a.env"},
				Set: []string{"K=V", "SAMPLE_METADATA_FLAG=x"}, Keep: true, Pull: true, IsolateEnv: true, NoColor: true}},
		{"down", []string{"--down", "all"}, verifyOptions{Down: "all", Output: "text", FailOn: catalog.SeverityHigh, Timeout: verify.DefaultTimeout}},
		{"root", []string{"c.yaml", "--root", "/srv/evals"},
			verifyOptions{Spec: "c.yaml", Root: "/srv/evals", Output: "text", FailOn: catalog.SeverityHigh, Timeout: verify.DefaultTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(t, newVerifyCmd, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.Spec != "" && tc.want.Root == "" {
				tc.want.Root = spec.FindRoot(tc.want.Spec) // this repository's
			}
			if !reflect.DeepEqual(deref(o), tc.want) {
				t.Errorf("options\n got %+v\nwant %+v", deref(o), tc.want)
			}
		})
	}
}

// TestVerifyExitAndOutputs: every exit status of a result, in every output, without an engine:
// 0 holds, 1 weaker, 2 bad input, 3 could not verify; text carries the reason in the report,
// the machine outputs in the error; each output parses and names the run.
func TestVerifyExitAndOutputs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "verify", "render", "testdata", "routed-network.json"))
	if err != nil {
		t.Fatal(err)
	}
	var base verify.Result
	if err := json.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	for _, exit := range []int{verify.ExitHolds, verify.ExitWeaker, verify.ExitBadInput, verify.ExitCouldNotRun} {
		for _, out := range verifyOutputs {
			t.Run(fmt.Sprintf("%d-%s", exit, out), func(t *testing.T) {
				res := base
				res.Exit, res.Reason = exit, fmt.Sprintf("reason %d", exit)
				res.Outcome = map[int]string{0: "holds", 1: "weaker", 2: "bad input", 3: "could not verify"}[exit]
				var buf bytes.Buffer
				f := newFactory(strings.NewReader(""), &buf, &buf)
				o := &verifyOptions{Output: out}
				if err := writeVerify(f, o, res); err != nil {
					t.Fatal(err)
				}
				got := buf.String()
				switch out {
				case "json", "yaml":
					var back verify.Result
					raw := []byte(got)
					if out == "yaml" {
						if raw, err = yaml.YAMLToJSON(raw); err != nil {
							t.Fatalf("yaml: %v\n%s", err, got)
						}
					}
					if err := json.Unmarshal(raw, &back); err != nil || back.RunID != base.RunID || back.Exit != exit {
						t.Fatalf("%s does not read back: %v %+v", out, err, back.RunID)
					}
				case "sarif", "junit", "text":
					if !strings.Contains(got, base.RunID) && !strings.Contains(got, base.Spec) {
						t.Fatalf("%s names neither the run nor the spec:\n%s", out, got)
					}
				}
				err := verifyExit(o, res)
				if exit == verify.ExitHolds {
					if err != nil {
						t.Fatalf("holds: %v", err)
					}
					return
				}
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != exit {
					t.Fatalf("exit = %v, want %d", err, exit)
				}
				if (out == "text") != (ee.msg == "") || out != "text" && !strings.Contains(ee.msg, res.Reason) {
					t.Errorf("message %q for -o %s", ee.msg, out)
				}
			})
		}
	}
}
