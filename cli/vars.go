package cli

import "github.com/rangekeeper/rangekeeper/spec"

// composeEnv is spec.ComposeEnv: lint and verify share it so a spec reads the same in both.
var composeEnv = spec.ComposeEnv
