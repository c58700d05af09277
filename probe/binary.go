package probe

import (
	"fmt"
	"os"
	"path/filepath"
)

// BinaryName is the probe executable's file name (built by `make build` into bin/).
const BinaryName = "rangekeeper-probe"

// EnvBinary overrides where Binary looks.
const EnvBinary = "RANGEKEEPER_PROBE"

// MaxBinarySize guards against reading something that is not the probe.
const MaxBinarySize = 16 << 20

// Binary returns the probe binary's bytes. It builds nothing: it reads $RANGEKEEPER_PROBE, or
// rangekeeper-probe next to the running executable, or bin/rangekeeper-probe in the working
// directory, and says where it looked when none exists.
func Binary() ([]byte, string, error) {
	p, err := Locate()
	if err != nil {
		return nil, p, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, p, fmt.Errorf("probe binary %s: %w", p, err)
	}
	return b, p, nil
}

// Locate finds the probe binary as Binary does without reading it (a stat per candidate), so a
// program can say at start whether probing is available and read the megabytes at the first
// probe.
func Locate() (string, error) {
	var candidates []string
	if p := os.Getenv(EnvBinary); p != "" {
		candidates = append(candidates, p)
	}
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), BinaryName))
	}
	candidates = append(candidates, filepath.Join("bin", BinaryName))
	for _, p := range candidates {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.Size() > MaxBinarySize {
			return p, fmt.Errorf("probe binary %s is %d bytes, larger than %d: not the probe", p, fi.Size(), MaxBinarySize)
		}
		return p, nil
	}
	return "", fmt.Errorf("probe binary not found (looked in %v); build it with `make build` or set %s: %w", candidates, EnvBinary, os.ErrNotExist)
}
