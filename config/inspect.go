package config

// InspectConfig says where Inspect's eval processes keep the live data that links a sandbox to
// its sample (the sample buffer, the trace file) and where they write their logs.
type InspectConfig struct {
	// DataDirs are Inspect data directories (one per eval user or host mount); empty means
	// Inspect's own default for this user (~/.local/share/inspect_ai, or $XDG_DATA_HOME).
	DataDirs []string `yaml:"data_dirs"`
	// ForeignDataDirs are data directories of another host, mounted here: their eval
	// processes' pids mean nothing on this host, so they are never judged dead.
	ForeignDataDirs []string `yaml:"foreign_data_dirs"`
	// LogDirs are the evals' --log-dir, read for the scores of samples already flushed from
	// the buffer.
	LogDirs []string `yaml:"log_dirs"`
	// Disabled turns the linkage off: no file of Inspect's is read.
	Disabled bool `yaml:"disabled"`
}
