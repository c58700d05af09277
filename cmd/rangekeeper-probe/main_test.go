package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/probe/facts"
)

func selfSHA(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestRun(t *testing.T) {
	good := selfSHA(t)
	bad := strings.Repeat("0", 64)
	targetsFile := filepath.Join(t.TempDir(), "targets.json")
	if err := os.WriteFile(targetsFile, []byte(`{"egress":["127.0.0.1:1"],"timeout_ms":200}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // substring
		stderr string
	}{
		{"version", []string{"--version"}, "", exitOK, facts.Version, ""},
		{"self-check mismatch refuses to run", []string{"--self-check", bad}, "", exitSelfCheck, "", "self-check failed"},
		{"self-check match runs", []string{"--self-check", good, "--deadline", "5s"}, "", exitOK, `"version": "` + facts.Version, ""},
		{"unknown target field", []string{"--targets", "-"}, `{"egres":["x:1"]}`, exitUsage, "", "unknown field"},
		{"targets from file", []string{"--targets", targetsFile}, "", exitOK, `"tested": true`, ""},
		{"bad flag", []string{"--nope"}, "", exitUsage, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &out, &errOut)
			if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout %.300s\nstderr %s", code, tt.code, out.String(), errOut.String())
			}
			if tt.code == exitSelfCheck && out.Len() != 0 {
				t.Error("a failed self-check still produced a report")
			}
		})
	}
}

// TestDeadlineStopsChecks: a deadline that has already passed skips the checks and says so.
func TestDeadlineStopsChecks(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--deadline", "1ns"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep facts.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Deadline || len(rep.Errors) == 0 || !strings.Contains(rep.Errors[0], "deadline") {
		t.Errorf("deadline %v errors %v", rep.Deadline, rep.Errors)
	}
	if rep.Network.Egress[0].Status != facts.NetNotTested {
		t.Errorf("network %+v", rep.Network)
	}
}
