package kubetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchmarksRefuseAQuickControlPlane(t *testing.T) {
	for _, tc := range []struct {
		file, mode string // file "" writes no build-mode file
		refused    bool
	}{
		{"optimised\n", "optimised", false},
		{"quick\n", "quick", true},
		{"", "unknown", false},
	} {
		dir := t.TempDir()
		if tc.file != "" {
			if err := os.WriteFile(filepath.Join(dir, "build-mode"), []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := BuildMode(dir); got != tc.mode {
			t.Errorf("BuildMode(%q) = %q, want %q", tc.file, got, tc.mode)
		}
		err := RequireOptimised(dir)
		if (err != nil) != tc.refused {
			t.Errorf("RequireOptimised(%q) = %v, refused want %v", tc.file, err, tc.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "make testbin") {
			t.Errorf("the refusal does not say how to get an optimised build: %v", err)
		}
	}
}
