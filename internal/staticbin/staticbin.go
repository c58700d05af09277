// Package staticbin reads the static helper binaries rangekeeper copies into sandboxes (the
// probe) or runs as containers (verify's canary): from an environment variable, else beside the
// running executable, else in bin/ of the working directory. It builds nothing.
package staticbin

import (
	"fmt"
	"os"
	"path/filepath"
)

// Read returns the bytes of the helper binary called name (what names it in errors: "probe")
// and the path it was read from, found as Locate finds it.
func Read(name, env, what string, max int64) ([]byte, string, error) {
	p, err := Locate(name, env, what, max)
	if err != nil {
		return nil, p, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, p, fmt.Errorf("%s binary %s: %w", what, p, err)
	}
	return b, p, nil
}

// Locate finds the helper binary called name without reading it (a stat per candidate): $env,
// else name beside the running executable, else bin/name. A file larger than max is refused,
// and a missing one is an error wrapping os.ErrNotExist that lists where it looked.
func Locate(name, env, what string, max int64) (string, error) {
	var candidates []string
	if p := os.Getenv(env); p != "" {
		candidates = append(candidates, p)
	}
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), name))
	}
	candidates = append(candidates, filepath.Join("bin", name))
	for _, p := range candidates {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > max {
			return p, fmt.Errorf("%s binary %s is %d bytes, larger than %d: not the %s", what, p, fi.Size(), max, what)
		}
		return p, nil
	}
	return "", fmt.Errorf("%s binary not found (looked in %v); build it with `make build` or set %s: %w", what, candidates, env, os.ErrNotExist)
}
