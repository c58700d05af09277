package staticbin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: the environment variable wins, bin/ is the fallback, an oversized or missing binary
// is refused with where it looked, and a directory is not a binary.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read("rk-helper", "RK_TEST_HELPER", "helper", 16); !errors.Is(err, os.ErrNotExist) ||
		!strings.Contains(err.Error(), "helper binary not found") || !strings.Contains(err.Error(), "RK_TEST_HELPER") {
		t.Fatalf("missing: %v", err)
	}
	if err := os.WriteFile(filepath.Join("bin", "rk-helper"), []byte("from bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, p, err := Read("rk-helper", "RK_TEST_HELPER", "helper", 16); err != nil || string(b) != "from bin" || p != filepath.Join("bin", "rk-helper") {
		t.Fatalf("bin/: %q %s %v", b, p, err)
	}
	env := filepath.Join(dir, "env-helper")
	if err := os.WriteFile(env, []byte("from the environment"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RK_TEST_HELPER", env)
	if _, _, err := Read("rk-helper", "RK_TEST_HELPER", "helper", 16); err == nil || !strings.Contains(err.Error(), "not the helper") {
		t.Fatalf("oversized: %v", err)
	}
	if b, p, err := Read("rk-helper", "RK_TEST_HELPER", "helper", 64); err != nil || string(b) != "from the environment" || p != env {
		t.Fatalf("environment: %q %s %v", b, p, err)
	}
	t.Setenv("RK_TEST_HELPER", dir) // a directory: skipped, bin/ is used
	if b, _, err := Read("rk-helper", "RK_TEST_HELPER", "helper", 64); err != nil || string(b) != "from bin" {
		t.Fatalf("directory: %q %v", b, err)
	}
}
