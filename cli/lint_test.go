package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func runLintCmd(t *testing.T, args ...string) (stdout string, code int, msg string) {
	t.Helper()
	return runLintWith(t, nil, args...)
}

func demo(name string) string { return filepath.Join("..", "demos", "specs", name) }

func TestLintExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"hardened compose is clean", []string{demo("compose-hardened.yaml")}, 0, "no findings"},
		{"all hardened demos", []string{demo("compose-hardened.yaml"), demo("values-hardened.yaml"), demo("proxmox-hardened.yaml"), demo("qm-hardened.conf"), demo("fw-hardened.fw")}, 0, "5 file(s), 0 finding(s)"},
		{"weak compose fails", []string{demo("compose-weak.yaml")}, 1, "CMP-H01"},
		{"threshold above the findings", []string{"--fail-on", "critical", demo("fw-weak.fw")}, 0, "PVE-N04"},
		{"threshold at the findings", []string{"--fail-on", "high", demo("fw-weak.fw")}, 1, "PVE-N05"},
		{"unreadable file", []string{filepath.Join("testdata", "does-not-exist.yaml")}, 2, ""},
		{"malformed file", []string{filepath.Join("..", "spec", "testdata", "malformed", "helm-unknown-key.yaml")}, 2, ""},
		{"bad fail-on", []string{"--fail-on", "urgent", demo("compose-weak.yaml")}, 2, ""},
		{"bad output", []string{"--output", "xml", demo("compose-weak.yaml")}, 2, ""},
		{"forced format", []string{"--format", "helm", demo("compose-hardened.yaml")}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code, _ := runLintCmd(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

func TestLintErrorNamesFileAndLine(t *testing.T) {
	path := filepath.Join("..", "spec", "testdata", "malformed", "helm-unknown-key.yaml")
	// Named relative to the repository's root, wherever lint runs.
	shown := filepath.Join("spec", "testdata", "malformed", "helm-unknown-key.yaml")
	_, code, msg := runLintCmd(t, path)
	if code != 2 || !strings.HasPrefix(msg, shown+":3:") {
		t.Fatalf("exit %d, message %q", code, msg)
	}
}

func TestLintJSONAndSARIF(t *testing.T) {
	out, code, _ := runLintCmd(t, "--output", "json", demo("values-weak.yaml"))
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Results []struct {
			Format   string
			Findings []struct{ RuleID string }
			Profile  struct{ Network string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 1 || doc.Results[0].Format != "helm" || doc.Results[0].Profile.Network != "N0" || len(doc.Results[0].Findings) == 0 {
		t.Fatalf("json: %+v", doc)
	}
	out, _, _ = runLintCmd(t, "--output", "sarif", demo("qm-weak.conf"))
	if !strings.Contains(out, `"version": "2.1.0"`) || !strings.Contains(out, `"ruleId": "PVE-H04"`) || !strings.Contains(out, `"startLine": 3`) {
		t.Fatalf("sarif:\n%s", out)
	}
}

func TestLintNoColourWhenNotATerminal(t *testing.T) {
	out, _, _ := runLintCmd(t, demo("compose-weak.yaml"))
	if strings.Contains(out, "\x1b[") {
		t.Fatal("colour written to a non-terminal")
	}
}

// TestLintHostilePaths: a FIFO, /dev/zero and a directory on the command line are refused at
// once (checked before they are opened), and the other files of the call are still reported.
func TestLintHostilePaths(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "compose.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{fifo, "/dev/zero", dir} {
		t.Run(filepath.Base(bad), func(t *testing.T) {
			named := bad
			if bad == dir {
				named = fifo // the walk finds the FIFO and refuses it without opening it
			}
			type res struct {
				out, msg string
				code     int
			}
			done := make(chan res, 1)
			go func() {
				out, code, msg := runLintCmd(t, bad, demo("compose-hardened.yaml"))
				done <- res{out, msg, code}
			}()
			select {
			case r := <-done:
				if r.code != 2 || !strings.Contains(r.msg, named+":") || !strings.Contains(r.out, "compose-hardened.yaml") {
					t.Fatalf("exit %d msg %q; output:\n%s", r.code, r.msg, r.out)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("lint %s did not return within 5s", bad)
			}
		})
	}
}

// TestLintRuntimePolicyFlag: CMP-H26 follows --sandboxed-runtime and the runtimes the engine
// offers; the default (recommended, MEDIUM) no longer fails --fail-on high.
func TestLintRuntimePolicyFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "compose.yaml")
	src := "services:\n  default:\n    image: busybox@sha256:" + strings.Repeat("a", 64) + "\n    network_mode: none\n    read_only: true\n    user: \"1000\"\n" +
		"    cap_drop: [ALL]\n    security_opt: [\"no-new-privileges:true\"]\n    mem_limit: 64m\n    memswap_limit: 64m\n    cpus: 0.5\n    pids_limit: 64\n    init: true\n" +
		"    healthcheck: {test: [\"CMD\", \"true\"]}\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		sev  string
		code int
	}{
		{nil, "MEDIUM", 0},
		{[]string{"--sandboxed-runtime", "required"}, "HIGH", 1},
		{[]string{"--sandboxed-runtime", "off"}, "INFO", 0},
		{[]string{"--engine-runtimes", "runc,io.containerd.runc.v2"}, "INFO", 0},
		{[]string{"--engine-runtimes", "runc,runsc"}, "MEDIUM", 0},
		{[]string{"--sandboxed-runtime", "sometimes"}, "", 2},
	} {
		out, code, msg := runLintCmd(t, append(tc.args, file)...)
		if code != tc.code || tc.sev != "" && !strings.Contains(out, tc.sev+" ") {
			t.Errorf("%v: exit %d (want %d), %q; output:\n%s", tc.args, code, tc.code, msg, out)
		}
	}
}
