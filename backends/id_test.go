package backends

import (
	"strings"
	"testing"
)

func TestParseIDTakesThePathFromTheRight(t *testing.T) {
	for _, tc := range []struct {
		in               string
		backend, rest    string
		name, short, bad string
	}{
		{in: "docker:default/inspect-ctf-web-iabc123", backend: "docker:default", rest: "inspect-ctf-web-iabc123", name: "inspect-ctf-web-iabc123"},
		{in: "docker:lab/container:plain", backend: "docker:lab", rest: "container:plain", name: "container:plain"},
		// EKS contexts contain ":" and "/": the namespace and release are the last two segments.
		{in: "k8s:arn:aws:eks:eu-west-2:123:cluster/prod/evals/agent-env-x1", backend: "k8s:arn:aws:eks:eu-west-2:123:cluster/prod", rest: "evals/agent-env-x1", name: "agent-env-x1"},
		{in: "k8s:kind-range/inspect/rel", backend: "k8s:kind-range", rest: "inspect/rel", name: "rel"},
		{in: "pve:range1/inspect-sample-ab12", backend: "pve:range1", rest: "inspect-sample-ab12", name: "inspect-sample-ab12"},
		{in: "pve:a/b/vm-101", backend: "pve:a/b", rest: "vm-101", name: "vm-101"},
		{in: "inspect-ctf-web", bad: "not a sandbox ID"},
		{in: "lxc:x/y", bad: "not a sandbox ID"},
		{in: "k8s:ctx/onlyrelease", bad: "want k8s:<context>/<namespace>/<release>"},
		{in: "docker:/p", bad: "empty endpoint"},
		{in: "k8s:ctx//rel", bad: "empty segment"},
	} {
		id, err := ParseID(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("ParseID(%q) = %+v, %v; want an error saying %q", tc.in, id, err, tc.bad)
			}
			if ShortName(tc.in) != tc.in || BackendOf(tc.in) != tc.in {
				t.Errorf("ShortName/BackendOf(%q) must return the input unchanged", tc.in)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseID(%q): %v", tc.in, err)
		}
		if id.Backend() != tc.backend || id.Rest() != tc.rest || id.Name() != tc.name || id.String() != tc.in {
			t.Errorf("ParseID(%q) = backend %q rest %q name %q string %q", tc.in, id.Backend(), id.Rest(), id.Name(), id.String())
		}
		if ShortName(tc.in) != tc.name || BackendOf(tc.in) != tc.backend {
			t.Errorf("ShortName/BackendOf(%q) = %q, %q", tc.in, ShortName(tc.in), BackendOf(tc.in))
		}
	}
}

func TestEveryActionIsDeclaredOnce(t *testing.T) {
	for _, a := range Actions() {
		s, ok := a.Spec()
		if !ok {
			t.Fatalf("%s listed but not declared", a)
		}
		if s.Implemented == nil && len(s.Needs) == 0 {
			t.Errorf("%s: no capability check: every backend would claim it", a)
		}
		if a.Destructive() && !a.Mutating() {
			t.Errorf("%s is destructive but not mutating: read-only mode would allow it", a)
		}
	}
	if !ActionDeleteSnapshot.Destructive() {
		t.Error("deleting a snapshot loses state: it must be destructive (confirmed, refused read-only)")
	}
}
