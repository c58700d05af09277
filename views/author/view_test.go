package author

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// teatest's golden package already registers -update; reuse it so `go test -update` works.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestViewGolden renders the form with a dangerous choice in a narrow and a wide terminal.
func TestViewGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int
	}{{"form-narrow.golden", 100}, {"form-wide.golden", 160}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(Options{NoColor: true, Width: tc.width, Height: 50})
			m.draft["privileged"] = "true"
			m.draft["scorer"] = "true"
			m.draft["scorerNet"] = "shared"
			m.Update(m.lintNow()())
			got := []byte(m.render())
			path := filepath.Join("testdata", tc.name)
			if updating() {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("view differs from %s (run go test -update and review):\n%s", path, got)
			}
		})
	}
}
