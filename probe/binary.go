package probe

import "github.com/rangekeeper/rangekeeper/internal/staticbin"

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
	return staticbin.Read(BinaryName, EnvBinary, "probe", MaxBinarySize)
}

// Locate finds the probe binary as Binary does without reading it (a stat per candidate), so a
// program can say at start whether probing is available and read the megabytes at the first
// probe.
func Locate() (string, error) {
	return staticbin.Locate(BinaryName, EnvBinary, "probe", MaxBinarySize)
}
