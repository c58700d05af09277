// Package goldentest is the one golden-file helper every view test uses: testdata/<name>.golden,
// rewritten by `go test ./... -update` (the flag teatest's golden package registers; this package
// imports it so the flag exists in every test binary that uses Assert, and is defined once).
package goldentest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aymanbagabas/go-udiff"
	_ "github.com/charmbracelet/x/exp/golden" // registers -update
)

// Updating reports whether the test binary runs with -update.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Assert compares got with testdata/name.golden, or rewrites the file under -update. A
// difference is reported as a unified diff, so a review sees exactly what changed.
func Assert(t testing.TB, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update and review the diff)", err)
	}
	if d := udiff.Unified(p, "got", string(want), got); d != "" {
		t.Errorf("%s differs from its golden file (run go test -update and review):\n%s", p, d)
	}
}
