//go:build tools

// Package k9s pins k9s, the terminal UI that bench-fleet measures rangekeeper against. It is a
// separate module so k9s's dependencies never touch rangekeeper's go.mod.
package k9s

import _ "github.com/derailed/k9s"
