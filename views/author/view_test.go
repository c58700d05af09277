package author

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/internal/goldentest"
)

// TestViewGolden renders the form with a dangerous choice in a narrow and a wide terminal, and
// file mode on an existing spec with a finding beside its line.
func TestViewGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int
	}{{"form-narrow", 100}, {"form-wide", 160}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(Options{NoColor: true, Width: tc.width, Height: 50})
			m.draft["privileged"] = "true"
			m.draft["scorer"] = "true"
			m.draft["scorerNet"] = "shared"
			m.Update(m.lintNow()())
			goldentest.Assert(t, tc.name, m.render())
		})
	}
	t.Run("file-mode", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "compose.yaml")
		src := "# keep this comment\nservices:\n  default:\n    image: busybox:1.36@sha256:" + strings.Repeat("a", 64) + "\n    network_mode: none\n    privileged: true\n"
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		m := newModel(Options{NoColor: true, Width: 100, Height: 30, Path: path})
		m.Update(m.Init()())
		m.Update(m.lintNow()())
		got := strings.ReplaceAll(m.render(), path, "compose.yaml") // the temp dir differs per run
		if !strings.Contains(got, "CMP-H01") || !strings.Contains(got, "   6 ") {
			t.Fatalf("file mode lacks the finding beside line 6:\n%s", got)
		}
		goldentest.Assert(t, "file-mode", got)
	})
}
