package inspectlive_test

import (
	"os"
	"testing"

	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

// Progress moves Version only; what links depend on (a new sample, a traced project, a status)
// moves LinkVersion too, so a reader that links thousands of rows relinks only then.
func TestLinkVersionMovesOnlyWithLinkInputs(t *testing.T) {
	w := newWorld(t)
	db := w.buffer(os.Getpid(), "ctf", "tidV")
	db.StartSample(t, "1", 1, "u-1")
	wt := w.watcher()
	pollN(wt, 1)
	steps := []struct {
		name     string
		do       func()
		linkMove bool
	}{
		{"tokens", func() { db.AddEvents(t, "1", 1, it.Model("m1", 3, 1200, false)) }, false},
		{"an agent's command", func() { db.AddEvents(t, "1", 1, it.SandboxExec(4, "ls /", 0, "bin")) }, false},
		{"a new sample", func() { db.StartSample(t, "2", 1, "u-2") }, true},
		{"a traced project", func() { w.trace(os.Getpid(), it.TraceSubprocess(5, "inspect-ctf-iabc123", "ctf", "2", 1)) }, true},
		{"a sample completes", func() { db.CompleteSample(t, "1", 1, "u-1", nil) }, true},
	}
	for _, s := range steps {
		v, lv := wt.Version(), wt.LinkVersion()
		s.do()
		pollN(wt, 2)
		if wt.Version() == v {
			t.Fatalf("%s: Version did not move", s.name)
		}
		if moved := wt.LinkVersion() != lv; moved != s.linkMove {
			t.Errorf("%s: LinkVersion moved %v; want %v", s.name, moved, s.linkMove)
		}
	}
}
