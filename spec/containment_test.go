package spec

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// TestDefaultBridgeEgress: network_mode bridge/default put the agent on the
// engine's default bridge; lint reports CMP-N03 and profiles N0. Before the fix: nothing, N2.
func TestDefaultBridgeEgress(t *testing.T) {
	for _, mode := range []string{"bridge", "default", "BRIDGE"} {
		res := lintString(t, "services:\n  default:\n    image: python:3.12\n    network_mode: "+mode+"\n", Options{})
		n03 := find(res, "CMP-N03")
		if len(n03) != 1 || n03[0].Severity != catalog.SeverityHigh || n03[0].Line != 4 {
			t.Errorf("network_mode %s: CMP-N03 %+v", mode, n03)
		}
		if res.Profile.N != "N0" {
			t.Errorf("network_mode %s: profile %s, want N0", mode, res.Profile)
		}
	}
	// The agent borrowing a bridged service's namespace is on the bridge too.
	res := lintString(t, "services:\n  default:\n    image: x\n    network_mode: service:helper\n  helper:\n    image: y\n    network_mode: bridge\n", Options{})
	if len(find(res, "CMP-N03")) != 1 || res.Profile.N != "N0" {
		t.Errorf("service: indirection: %v %s", find(res, "CMP-N03"), res.Profile)
	}
	if res := lintString(t, "services:\n  default:\n    image: x\n    network_mode: none\n", Options{}); len(find(res, "CMP-N03")) != 0 || res.Profile.N != "N2" {
		t.Errorf("network_mode none: %v %s", res.Findings, res.Profile)
	}
}

// TestCredentialPassthrough: a credential name without a value passes the
// harness's own variable into the agent. Before the fix: no finding at all.
func TestCredentialPassthrough(t *testing.T) {
	dir := t.TempDir()
	const secret = "sk-ant-DUMMY-value-never-shown-0000000000"
	if err := os.WriteFile(filepath.Join(dir, "agent.env"), []byte("# model access\nexport ANTHROPIC_API_KEY="+secret+"\nHARMLESS=1\nGITHUB_TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, env, want string }{
		{"list without value", "    environment: [ANTHROPIC_API_KEY]\n", "ANTHROPIC_API_KEY passed through"},
		{"map with null", "    environment:\n      OPENAI_API_KEY:\n", "OPENAI_API_KEY passed through"},
		{"list with value", "    environment: [\"HF_TOKEN=" + secret + "\"]\n", "HF_TOKEN in its environment"},
		{"renamed by interpolation", "    environment:\n      MODEL_ACCESS: ${ANTHROPIC_API_KEY}\n", "the harness's ANTHROPIC_API_KEY"},
		{"env_file", "    env_file: agent.env\n", "ANTHROPIC_API_KEY from env_file agent.env"},
		{"env_file passthrough line", "    env_file: [agent.env]\n", "GITHUB_TOKEN from env_file agent.env"},
		{"secret from the environment", "    secrets: [model]\nsecrets:\n  model:\n    environment: OPENAI_API_KEY\n", "carries the harness's OPENAI_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "services:\n  default:\n    image: x\n    network_mode: none\n" + tc.env
			file := filepath.Join(dir, "compose.yaml")
			if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := LintFile(file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var hit *Finding
			for i, f := range find(res, "CMP-T01") {
				if strings.Contains(f.Message, tc.want) {
					hit = &find(res, "CMP-T01")[i]
				}
				if strings.Contains(f.Message, secret) {
					t.Errorf("a finding shows the value: %s", f.Message)
				}
			}
			if hit == nil || hit.Severity != catalog.SeverityCritical {
				t.Fatalf("no CRITICAL CMP-T01 %q in %+v", tc.want, find(res, "CMP-T01"))
			}
		})
	}
}

// TestFuzzCrashNullPid: `pid:` with no value is an ordinary input, linted as unset.
func TestFuzzCrashNullPid(t *testing.T) {
	for _, src := range []string{"services:\n A:\n  pid:\n", "x-a: &a\n  pid: ~\nservices:\n  A:\n    <<: *a\n    image: x\n"} {
		res, err := LintBytes("compose.yaml", []byte(src), Options{})
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if len(find(res, "CMP-H16")) != 0 {
			t.Errorf("%q: null pid reported as a namespace mode", src)
		}
	}
}

// TestPulledInFilesConfined: include/extends/env_file stay inside the project, only
// regular files are read, and no error quotes a pulled-in file's content.
func TestPulledInFilesConfined(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "project")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	const hash = "$6$saltsalt$DUMMYHASHnevershown"
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "shadow"), "root:"+hash+":19000:0:99999:7:::\n")
	write(filepath.Join(root, "outside.yaml"), "services:\n  extra:\n    image: x\n")
	write(filepath.Join(proj, "bad-include.yaml"), "root:"+hash+":19000:0:99999:7:::\n")
	if err := os.Symlink(filepath.Join(root, "shadow"), filepath.Join(proj, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := "services:\n  default:\n    image: x\n    network_mode: none\n"
	for _, tc := range []struct {
		name, src, want string
		line            int
	}{
		{"absolute include", "include:\n  - " + filepath.Join(root, "shadow") + "\n" + svc, "outside the project directory", 2},
		{"parent include", "include: [../outside.yaml]\n" + svc, "outside the project directory", 1},
		{"symlink out", "include: [link]\n" + svc, "outside the project directory", 1},
		{"fifo include", "include: [fifo]\n" + svc, "not a regular file (a FIFO)", 1},
		{"extends out", "services:\n  default:\n    image: x\n    extends:\n      file: ../outside.yaml\n      service: extra\n", "outside the project directory", 5},
		{"env_file out", svc + "    env_file: ../shadow\n", "outside the project directory", 5},
		{"env_file fifo", svc + "    env_file: [fifo]\n", "not a regular file", 5},
		{"content not quoted", "include: [bad-include.yaml]\n" + svc, "included file bad-include.yaml is not a valid Compose file", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(proj, "compose.yaml")
			write(file, tc.src)
			start := time.Now()
			_, err := LintFile(file, Options{})
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			ie, ok := err.(*InputError)
			if !ok || !strings.Contains(ie.Msg, tc.want) || ie.Line != tc.line {
				t.Fatalf("error %v, want %q at line %d", err, tc.want, tc.line)
			}
			if strings.Contains(err.Error(), "DUMMYHASH") || strings.Contains(err.Error(), "19000") {
				t.Errorf("error quotes the pulled-in file: %v", err)
			}
		})
	}
	// The flag lets an operator read a shared file outside the project on purpose.
	file := filepath.Join(proj, "compose.yaml")
	write(file, "include: [../outside.yaml]\n"+svc)
	if _, err := LintFile(file, Options{AllowOutsideProject: true}); err != nil {
		t.Fatalf("with AllowOutsideProject: %v", err)
	}
}
