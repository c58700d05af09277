package canary

import "github.com/rangekeeper/rangekeeper/internal/staticbin"

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
	b, _, err := staticbin.Read(BinaryName, EnvBinary, "canary", maxBinarySize)
	return b, err
}
