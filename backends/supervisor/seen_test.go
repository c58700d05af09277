package supervisor

import (
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
)

type versioned map[string]uint64

func (v versioned) Version(b string) uint64 { return v[b] }
func (v versioned) FleetOf(b string) ([]backends.Sandbox, uint64) {
	return []backends.Sandbox{{ID: b + "/x"}}, v[b]
}

// The first look at a backend reads its fleet; later looks read it only when its version moved.
func TestSeenReadsOnlyMovedFleets(t *testing.T) {
	src := versioned{"a": 1}
	seen := Seen{}
	for i, want := range []bool{true, false, false} {
		if _, ok := seen.Changed(src, "a"); ok != want {
			t.Fatalf("look %d: changed %v, want %v", i, ok, want)
		}
	}
	src["a"] = 2
	if f, ok := seen.Changed(src, "a"); !ok || len(f) != 1 || f[0].ID != "a/x" {
		t.Fatalf("after the version moved: %v %v", f, ok)
	}
}
