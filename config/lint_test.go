package config

import (
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

func TestLintPolicy(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want catalog.RuntimePolicy
		err  string
	}{
		{"lint:\n  policy:\n    sandboxed_runtime: required\n", catalog.RuntimeRequired, ""},
		{"lint:\n  policy:\n    sandboxed_runtime: OFF\n", catalog.RuntimeOff, ""},
		{"read_only: true\n", "", ""},
		{"lint:\n  policy:\n    sandboxed_runtime: maybe\n", "", "c.yaml: line 3: lint.policy.sandboxed_runtime"},
		{"lint:\n  policy:\n    runtime: required\n", "", "line 3: field runtime not found"},
		{"lint:\n  polcy: {}\n", "", "line 2: field polcy not found"},
	} {
		c, err := Parse("c.yaml", []byte(tc.src))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.src, err, tc.err)
			}
			continue
		}
		if err != nil || c.Lint.Policy.SandboxedRuntime != tc.want {
			t.Errorf("%q: %v %q, want %q", tc.src, err, c.Lint.Policy.SandboxedRuntime, tc.want)
		}
	}
}
