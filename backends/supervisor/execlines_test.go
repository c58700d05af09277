package supervisor

import (
	"slices"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
)

// execBackend is a scripted backend that also remembers exec lines per sandbox.
type execBackend struct {
	*scripted
	lines map[string][]string
}

func (e execBackend) RecentExecs(id string) []string { return e.lines[id] }

// RecentExecs asks the backend owning the sandbox (the longest name prefixing its ID), and
// answers nil for a sandbox of a backend keeping no lines or of no backend at all.
func TestRecentExecsAsksTheOwningBackend(t *testing.T) {
	withLines := execBackend{&scripted{name: "docker:a"}, map[string][]string{
		"docker:a/p":  {"bash --login -c ls"},
		"docker:ab/p": {"wrong backend"},
	}}
	longer := execBackend{&scripted{name: "docker:ab"}, map[string][]string{"docker:ab/p": {"id -u"}}}
	plain := &scripted{name: "docker:plain"}
	s := New([]backends.Backend{withLines, longer, plain}, Backoff{})
	var x backends.ExecLines = s

	for id, want := range map[string][]string{
		"docker:a/p":     {"bash --login -c ls"},
		"docker:ab/p":    {"id -u"},
		"docker:plain/p": nil,
		"k8s:nowhere/p":  nil,
	} {
		if got := x.RecentExecs(id); !slices.Equal(got, want) || (want == nil) != (got == nil) {
			t.Errorf("RecentExecs(%s) = %q; want %q", id, got, want)
		}
	}
}
