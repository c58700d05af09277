package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// TestMalformed: every file in testdata/malformed yields an InputError naming the file and the
// line of the problem, and nothing panics (alias bombs and deep nesting included).
func TestMalformed(t *testing.T) {
	want := map[string]int{
		"alias-bomb-compose.yaml": 1, "alias-bomb-helm.yaml": 1, "compose-bad-type.yaml": 4,
		"compose-services-list.yaml": 1, "compose-unknown-key.yaml": 4, "deep-nesting.yaml": 1,
		"empty.yaml": 1, "fw-unterminated.fw": 1, "helm-bad-type.yaml": 1,
		"helm-unknown-key.yaml": 3, "nul-byte.yaml": 3, "proxmox-bad-sdn.yaml": 2,
		"proxmox-unknown-field.yaml": 3, "qm-no-colon.conf": 3, "unknown-format.yaml": 1,
		"yaml-syntax.yaml": 1, "extends-dev-zero.yaml": 5, "include-dev-zero.yaml": 2, "recursive-merge.yaml": 2,
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "malformed", "*"))
	if len(files) != len(want) {
		t.Fatalf("%d malformed fixtures, %d expectations", len(files), len(want))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := LintFile(f, Options{})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want an InputError, got %v", err)
			}
			if ie.internal {
				t.Fatalf("parser panicked: %v", err)
			}
			if ie.File != f || !strings.HasPrefix(err.Error(), f+":") {
				t.Errorf("error does not name the file: %v", err)
			}
			if ie.Line != want[filepath.Base(f)] {
				t.Errorf("line %d, want %d: %v", ie.Line, want[filepath.Base(f)], err)
			}
		})
	}
}

func TestSizeCap(t *testing.T) {
	big := []byte("services:\n  default:\n    image: x\n" + strings.Repeat("# padding\n", 1000))
	_, err := LintBytes("big.yaml", big, Options{MaxBytes: 1024})
	if !IsInputError(err) || !strings.Contains(err.Error(), "big.yaml:1: file larger than 1024 bytes") {
		t.Fatalf("got %v", err)
	}
}

func TestDetectAndOverride(t *testing.T) {
	for file, want := range map[string]Format{
		"compose-hardened.yaml": FormatCompose, "compose-weak.yaml": FormatCompose,
		"values-hardened.yaml": FormatHelm, "values-weak.yaml": FormatHelm,
		"proxmox-hardened.yaml": FormatProxmox, "proxmox-weak.yaml": FormatProxmox,
		"qm-hardened.conf": FormatQM, "qm-weak.conf": FormatQM,
		"fw-hardened.fw": FormatPVEFirewall, "fw-weak.fw": FormatPVEFirewall,
	} {
		res, err := LintFile(filepath.Join("..", "demos", "specs", file), Options{})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if res.Format != want {
			t.Errorf("%s detected as %q, want %q", file, res.Format, want)
		}
	}
	// Forcing a format applies that format's validation: Compose keys are not agent-env values.
	_, err := LintFile(filepath.Join("..", "demos", "specs", "compose-hardened.yaml"), Options{Format: FormatHelm})
	if !IsInputError(err) || !strings.Contains(err.Error(), "agent-env values schema") {
		t.Fatalf("forced helm on a compose file: %v", err)
	}
	if f, err := ParseFormat("k8s"); err != nil || f != FormatHelm {
		t.Fatalf("ParseFormat(k8s) = %q, %v", f, err)
	}
	if _, err := ParseFormat("nomad"); err == nil {
		t.Fatal("ParseFormat accepted an unknown format")
	}
}

func lintString(t *testing.T, src string, o Options) Result {
	t.Helper()
	res, err := LintBytes("compose.yaml", []byte(src), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func find(res Result, id string) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		if f.RuleID == id {
			out = append(out, f)
		}
	}
	return out
}

// TestPositions: findings point at the key that causes them, including keys pulled in through a
// merge key (the anchor's line) and list items.
func TestPositions(t *testing.T) {
	src := `x-bad: &bad
  privileged: true
services:
  default:
    <<: *bad
    image: busybox:1.36
    cap_add:
      - CHOWN
      - SYS_ADMIN
`
	res := lintString(t, src, Options{})
	h01 := find(res, "CMP-H01")
	if len(h01) != 1 || h01[0].Line != 2 || h01[0].Column != 3 {
		t.Errorf("CMP-H01 via anchor: %+v", h01)
	}
	h06 := find(res, "CMP-H06")
	if len(h06) != 1 || h06[0].Line != 9 || h06[0].Column != 9 {
		t.Errorf("CMP-H06 list item: %+v", h06)
	}
	if p := h06[0].Path; p != "services.default.cap_add[1]" {
		t.Errorf("path %q", p)
	}
}

func TestInterpolationAndProfiles(t *testing.T) {
	src := `services:
  default:
    image: busybox:1.36
    network_mode: ${NET_MODE:-none}
  debug:
    image: busybox:1.36
    profiles: [debug]
    privileged: true
`
	res := lintString(t, src, Options{Env: map[string]string{"NET_MODE": "host"}})
	if len(find(res, "CMP-N01")) != 1 {
		t.Error("interpolated network_mode: host not flagged")
	}
	if len(find(res, "CMP-H01")) != 1 {
		t.Error("a service behind a profile is not linted")
	}
	res = lintString(t, src, Options{})
	if len(find(res, "CMP-N01")) != 0 || res.Profile.N != "N2" {
		t.Errorf("default none: N01=%v profile %s", find(res, "CMP-N01"), res.Profile)
	}
}

func TestAgentSelection(t *testing.T) {
	base := "services:\n  first:\n    image: a:1\n  second:\n    image: b:1\n"
	for name, tc := range map[string]struct {
		src  string
		opts Options
		want string
	}{
		"first service":  {base, Options{}, "first"},
		"x-default":      {strings.Replace(base, "    image: b:1\n", "    image: b:1\n    x-default: true\n", 1), Options{}, "second"},
		"named default":  {base + "  default:\n    image: c:1\n", Options{}, "default"},
		"operator knows": {base, Options{AgentServices: []string{"second"}}, "second"},
	} {
		t.Run(name, func(t *testing.T) {
			res := lintString(t, tc.src, tc.opts)
			n03 := find(res, "CMP-N03")
			if len(n03) != 1 || !strings.Contains(n03[0].Message, `"`+tc.want+`"`) {
				t.Errorf("agent should be %q: %+v", tc.want, n03)
			}
		})
	}
}

func TestSuppressions(t *testing.T) {
	src := `services:
  default:
    image: busybox:1.36
    network_mode: none
    # rangekeeper:ignore CMP-H06 the task needs ptrace to debug the target
    cap_add: [SYS_PTRACE]
    pid: host # rangekeeper:ignore CMP-H16
`
	res := lintString(t, src, Options{})
	if len(res.Suppressed) != 1 || res.Suppressed[0].RuleID != "CMP-H06" || res.Suppressed[0].Reason != "the task needs ptrace to debug the target" || res.Suppressed[0].CommentLine != 5 {
		t.Errorf("suppressed: %+v", res.Suppressed)
	}
	if len(find(res, "CMP-H06")) != 0 {
		t.Error("suppressed finding still reported")
	}
	if len(find(res, "CMP-H16")) != 1 {
		t.Error("a suppression without a reason must not be honoured")
	}
	if rk := find(res, "RK-001"); len(rk) != 1 || rk[0].Line != 7 {
		t.Errorf("missing-reason suppression not reported: %+v", rk)
	}
}

func TestProfiles(t *testing.T) {
	for file, want := range map[string]string{
		"compose-hardened.yaml": "T0.H1.N2", "compose-weak.yaml": "T0.H1.N0",
		"values-hardened.yaml": "T0.H2.N2", "values-weak.yaml": "T0.H2.N0",
		"proxmox-hardened.yaml": "T0.H3.N2", "proxmox-weak.yaml": "T0.H3.N0", "qm-weak.conf": "T0.H3.N0",
	} {
		res, err := LintFile(filepath.Join("..", "demos", "specs", file), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Profile.String() != want || len(res.Profile.Why) == 0 {
			t.Errorf("%s: profile %s (%v), want %s", file, res.Profile, res.Profile.Why, want)
		}
	}
	// T2 (no execution) in any sandbox and H1 with N1 are incompatible.
	data, _ := os.ReadFile(filepath.Join("..", "demos", "specs", "compose-hardened.yaml"))
	res, err := LintBytes("c.yaml", data, Options{Tooling: "T2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Profile.String() != "T2.H1.N2" || len(res.Profile.Incompatible) != 1 || len(find(res, "THN-001")) != 1 {
		t.Errorf("T2 in Docker: %+v", res.Profile)
	}
	res = lintString(t, "services:\n  default:\n    image: a:1\n    networks: [r]\n    environment: {HTTPS_PROXY: \"http://proxy:3128\"}\nnetworks:\n  r: {internal: true}\n", Options{})
	if res.Profile.String() != "T0.H1.N1" || len(find(res, "THN-001")) != 1 {
		t.Errorf("H1.N1: %+v", res.Profile)
	}
}

// TestEngineContext: CMP-N06 follows the engine version through the advisory table; a
// distribution build it cannot judge is INFO, never HIGH.
func TestEngineContext(t *testing.T) {
	src := "services:\n  default:\n    image: a:1\n    networks: [r]\nnetworks:\n  r: {internal: true}\n"
	for v, want := range map[string]catalog.Severity{
		"20.10.24": catalog.SeverityHigh, "23.0.10": catalog.SeverityHigh, "23.0.11": catalog.SeverityNone, "24.0.9": catalog.SeverityHigh,
		"25.0.3": catalog.SeverityHigh, "25.0.4": catalog.SeverityNone, "26.0.0": catalog.SeverityNone, "27.5.1": catalog.SeverityNone, "": catalog.SeverityNone,
		"20.10.24+dfsg1": catalog.SeverityInfo, "24.0.5-0ubuntu1~22.04.1": catalog.SeverityInfo,
	} {
		got := catalog.SeverityNone
		for _, f := range find(lintString(t, src, Options{EngineVersion: v}), "CMP-N06") {
			got = f.Severity
		}
		if got != want {
			t.Errorf("engine %q: CMP-N06 %s, want %s", v, got, want)
		}
	}
}

func TestSecretsNeverInMessages(t *testing.T) {
	res := lintString(t, "services:\n  default:\n    image: a:1\n    environment:\n      GITHUB_TOKEN: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n", Options{})
	for _, f := range res.Findings {
		if strings.Contains(f.Message, "ghp_") {
			t.Fatalf("secret value leaked into %s: %s", f.RuleID, f.Message)
		}
	}
	if t01 := find(res, "CMP-T01"); len(t01) != 1 || t01[0].Severity.String() != "critical" {
		t.Errorf("CMP-T01: %+v", t01)
	}
}

// TestComposeAsK8s lints a Compose file the way inspect_k8s_sandbox converts it: unsupported
// keys are rejected with their line, and the converted values get the agent-env rules with
// findings pointing at the Compose keys.
func TestComposeAsK8s(t *testing.T) {
	src := `x-inspect_k8s_sandbox:
  allow_domains: ["*"]
services:
  agent:
    image: python:3.12
    x-default: true
    runtime: runc
    environment:
      OPENAI_API_KEY: not-a-key
`
	res, err := LintBytes("compose.yaml", []byte(src), Options{Format: FormatComposeK8s})
	if err != nil {
		t.Fatal(err)
	}
	if res.Profile.H != "H2" || res.Profile.N != "N0" {
		t.Errorf("profile %s", res.Profile)
	}
	for id, line := range map[string]int{"HELM-N01": 1, "HELM-H01": 7, "K8S-T03": 9} {
		fs := find(res, id)
		if len(fs) != 1 || fs[0].Line != line || !strings.Contains(fs[0].Message, `"default"`) && id != "HELM-N01" {
			t.Errorf("%s: %+v (want line %d)", id, fs, line)
		}
	}
	_, err = LintBytes("compose.yaml", []byte("services:\n  default:\n    image: x\n    cap_add: [NET_ADMIN]\n"), Options{Format: FormatComposeK8s})
	if !IsInputError(err) || !strings.Contains(err.Error(), "compose.yaml:4:5:") || !strings.Contains(err.Error(), "cap_add") {
		t.Errorf("unsupported key: %v", err)
	}
}
