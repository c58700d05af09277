// Package staticbintest builds the static helper binaries (the probe, the canary) for tests,
// exactly as `make build` does, so every test runs the same binary a user's sandbox would get.
package staticbintest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Build compiles cmd/<name> of this repository static and stripped (CGO_ENABLED=0, -trimpath,
// -s -w, as the Makefile does) into dir and returns the binary's path. The Go build cache makes
// a repeat a link at most.
func Build(dir, name string) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", name, err, msg)
	}
	return out, nil
}
