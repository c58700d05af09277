package config

import "time"

// LogsConfig tunes the log views.
type LogsConfig struct {
	// RingLines is how many lines a log view keeps (the oldest are dropped); 0: 10,000.
	RingLines int `yaml:"ring_lines"`
}

// TimelineConfig bounds what the timeline records of watched sandboxes.
type TimelineConfig struct {
	// MaxAge drops entries older than this; 0: 30 days.
	MaxAge time.Duration `yaml:"max_age"`
	// MaxEntries keeps at most this many entries per sandbox (the oldest go first); 0: 5,000.
	MaxEntries int `yaml:"max_entries"`
	// Disabled stops the workbench from recording activity.
	Disabled bool `yaml:"disabled"`
}
