package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func runLintCmd(t *testing.T, args ...string) (stdout string, code int, msg string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(""), &out, &errOut)
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

func demo(name string) string { return filepath.Join("..", "..", "demos", "specs", name) }

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
		{"malformed file", []string{filepath.Join("..", "..", "spec", "testdata", "malformed", "helm-null.yaml")}, 2, ""},
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
	path := filepath.Join("..", "..", "spec", "testdata", "malformed", "helm-null.yaml")
	_, code, msg := runLintCmd(t, path)
	if code != 2 || !strings.HasPrefix(msg, path+":5:") {
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
