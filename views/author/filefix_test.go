package author

import (
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/spec"
)

const fixBase = `# Task 7 range.   Odd  spacing and blank lines must survive.

services:
  default:
    image: "busybox:1.36@sha256:` + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + `"   # pinned
    # the agent's sandbox
    init: true
    runtime: runsc
    read_only: true
    user: "1000:1000"
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true"]
    mem_limit: 1g
    memswap_limit: 1g
    cpus: 1
    pids_limit: 256
    healthcheck: {test: ["CMD", "true"]}
    networks: [range]

networks:
  range:
    internal: true
`

// TestFileFixesKeepLayout weakens the hardened base one way at a time, applies the one-key fix
// and checks that the finding is gone and every other line of the file is unchanged.
func TestFileFixesKeepLayout(t *testing.T) {
	for _, tc := range []struct {
		id           string
		weaken       func(string) string
		changedLines int // lines that may differ from the hardened base after the fix
	}{
		{"CMP-H01", func(s string) string {
			return strings.Replace(s, "    init: true\n", "    init: true\n    privileged: true\n", 1)
		}, 0},
		{"CMP-H16", func(s string) string {
			return strings.Replace(s, "    init: true\n", "    init: true\n    pid: host\n", 1)
		}, 0},
		{"CMP-H24", func(s string) string { return strings.Replace(s, "read_only: true", "read_only: false", 1) }, 0},
		{"CMP-H25", func(s string) string { return strings.Replace(s, "    user: \"1000:1000\"\n", "", 1) }, 1},
		{"CMP-H26", func(s string) string { return strings.Replace(s, "runtime: runsc", "runtime: runc", 1) }, 0},
		{"CMP-H08", func(s string) string { return strings.Replace(s, "cap_drop: [ALL]", "cap_drop: [NET_RAW]", 1) }, 0},
		{"CMP-H13", func(s string) string {
			return strings.Replace(s, `security_opt: ["no-new-privileges:true"]`, `security_opt: ["label:type:container_t"]`, 1)
		}, 1},
		{"CMP-R03", func(s string) string { return strings.Replace(s, "    pids_limit: 256\n", "", 1) }, 1},
		{"CMP-N03", func(s string) string { return strings.Replace(s, "    internal: true\n", "    attachable: false\n", 1) }, 2},
	} {
		t.Run(tc.id, func(t *testing.T) {
			weak := tc.weaken(fixBase)
			res, err := spec.LintBytes("compose.yaml", []byte(weak), spec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var target *spec.Finding
			for i := range res.Findings {
				if res.Findings[i].RuleID == tc.id {
					target = &res.Findings[i]
				}
			}
			if target == nil {
				t.Fatalf("weakened file does not fire %s: %+v", tc.id, res.Findings)
			}
			out, err := fixFile(&openFile{path: "compose.yaml", data: []byte(weak), format: spec.FormatCompose}, *target)
			if err != nil {
				t.Fatal(err)
			}
			res, err = spec.LintBytes("compose.yaml", out, spec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.RuleID == tc.id {
					t.Fatalf("%s still fires after the fix:\n%s", tc.id, out)
				}
			}
			// Every line of the hardened base except the ones the fix re-creates is kept verbatim.
			got := setOfLines(string(out))
			missing := 0
			for _, l := range strings.Split(fixBase, "\n") {
				if !got[l] {
					missing++
				}
			}
			if missing > tc.changedLines {
				t.Errorf("fix changed %d lines of the layout (allowed %d):\n%s", missing, tc.changedLines, out)
			}
			if !strings.Contains(string(out), "# Task 7 range.   Odd  spacing and blank lines must survive.\n\n") || !strings.Contains(string(out), `"   # pinned`) {
				t.Errorf("comments or spacing lost:\n%s", out)
			}
		})
	}
}

func setOfLines(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		m[l] = true
	}
	return m
}
