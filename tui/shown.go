package tui

import "github.com/rangekeeper/rangekeeper/internal/redact"

// shown is what the status line may show of a message: errors from backends and the action
// layer can quote a command line or an engine's answer with a credential in it.
func shown(s string) string { return redact.Text(s) }
