package canary

import (
	"fmt"
	"os"
	"path/filepath"
)

// BinaryName is the canary executable's file name (built by `make build` into bin/).
const BinaryName = "rangekeeper-canary"

// EnvBinary overrides where Binary looks.
const EnvBinary = "RANGEKEEPER_CANARY"

// maxBinarySize guards against reading something that is not the canary.
const maxBinarySize = 32 << 20

// Binary returns the canary binary's bytes: $RANGEKEEPER_CANARY, else rangekeeper-canary next
// to the running executable, else bin/rangekeeper-canary; it says where it looked when none
// exists. It builds nothing.
func Binary() ([]byte, error) {
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
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > maxBinarySize {
			return nil, fmt.Errorf("canary binary %s is %d bytes: not the canary", p, fi.Size())
		}
		return os.ReadFile(p)
	}
	return nil, fmt.Errorf("canary binary not found (looked in %v); build it with `make build` or set %s: %w", candidates, EnvBinary, os.ErrNotExist)
}
