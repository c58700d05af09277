package backends

// ExecLines is a backend that remembers the command lines recently executed in each of its
// sandboxes, arguments included. The lines may hold secrets: they live in the backend's memory
// only, for matching a sandbox to the Inspect sample that ran them, and are never stored,
// logged or shown. Optional: a backend whose engine does not report execs has no such lines.
type ExecLines interface {
	// RecentExecs returns the sandbox's most recent exec command lines, oldest first (nil when
	// none are known). The slice is the caller's.
	RecentExecs(sandboxID string) []string
}
