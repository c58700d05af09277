package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// runVerifyCmd runs `verify` with a hermetic config and state file.
func runVerifyCmd(t *testing.T, config string, args ...string) (stdout, stderr string, code int, msg string) {
	t.Helper()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
	f.ConfigPath = filepath.Join(dir, "config.yaml")
	f.StatePath = filepath.Join(dir, "state.db")
	writeFile(t, f.ConfigPath, config)
	cmd := newVerifyCmd(f)
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
	helm := filepath.Join("..", "..", "demos", "specs", "values-hardened.yaml")
	compose := demo("compose-hardened.yaml")
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"no spec", "", nil, "want SPEC"},
		{"unknown output", "", []string{compose, "-o", "xml"}, `unknown --output "xml"`},
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
