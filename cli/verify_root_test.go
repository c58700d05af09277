package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rangekeeper/rangekeeper/spec"
)

// TestVerifyRoot: verify lints under the project root lint would use, the repository holding the
// spec, so a spec including a file from a parent directory inside that repository verifies; a
// --root below the included file refuses it.
func TestVerifyRoot(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "task"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "base.yaml"), "services:\n  target:\n    image: t:1\n")
	specPath := filepath.Join(repo, "task", "compose.yaml")
	writeFile(t, specPath, "include:\n  - ../base.yaml\nservices:\n  default:\n    image: a:1\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"the repository holding the spec", []string{specPath}, repo},
		{"--root wins", []string{specPath, "--root", filepath.Join(repo, "task")}, filepath.Join(repo, "task")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(t, newVerifyCmd, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if o.Root != tc.want {
				t.Errorf("root %q, want %q", o.Root, tc.want)
			}
			// What verify's lint step then does with it (verify.Options.Root; verify's own
			// tests run it through a stand-in engine).
			_, err = spec.LintFile(specPath, spec.Options{Root: o.Root})
			if inside := o.Root == repo; (err == nil) != inside {
				t.Errorf("lint under %s: %v", o.Root, err)
			}
		})
	}
}
