package backends

import "context"

// Quarantine and release cut a sandbox off from everything outside itself while
// every member keeps running and keeps its filesystem, then restore exactly what was there.
const (
	ActionQuarantine Action = "quarantine"
	ActionRelease    Action = "release"
)

// Quarantiner isolates a sandbox and restores it.
type Quarantiner interface {
	// Quarantine cuts the sandbox off. It first describes what it will change (the plan: the
	// backend's own JSON, everything release needs to restore it exactly) and hands it to save
	// before the first change; if save fails nothing is changed.
	Quarantine(ctx context.Context, sandboxID string, save func(plan []byte) error) error
	// Release restores what the plan Quarantine saved describes.
	Release(ctx context.Context, sandboxID string, plan []byte) error
}
