package config

import (
	"time"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// WatchConfig tunes the containment watch (alerts on a running sandbox that weakens).
type WatchConfig struct {
	// MinSeverity is the lowest severity of a new finding that raises an alert (default medium);
	// a severity increase always does.
	MinSeverity catalog.Severity `yaml:"min_severity"`
	// Hook is a command (argv, no shell) that receives each alert as JSON on stdin, e.g. to page
	// someone. It runs with HookTimeout (default 10s); its failure is shown, never blocks.
	Hook        []string      `yaml:"hook"`
	HookTimeout time.Duration `yaml:"hook_timeout"`
}
