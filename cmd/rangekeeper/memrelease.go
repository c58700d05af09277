package main

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// Settling: a fleet that has not changed for loadQuiet after every backend answered has loaded;
// past loadAtMost the memory is released whatever the fleet does.
const (
	loadQuiet  = 5 * time.Second
	loadAtMost = 2 * time.Minute
)

// releaseLoadMemory runs releaseAfterLoad for the command's supervisor, in the background.
func releaseLoadMemory(ctx context.Context, s loadWatcher) {
	go releaseAfterLoad(ctx, s, loadQuiet, loadAtMost, debug.FreeOSMemory)
}

// loadWatcher is what releaseAfterLoad needs of the supervisor.
type loadWatcher interface {
	Backends() []backends.Backend
	Ready(backend string) <-chan struct{}
	FleetNotify() <-chan struct{}
}

// releaseAfterLoad calls release (debug.FreeOSMemory) once the initial load has settled: every
// backend answered and the fleet did not change for quiet, or atMost passed. Listing thousands
// of sandboxes decodes every object in full before the backends keep their slim copies; left to
// itself, the runtime hands that peak back to the system slowly, page runs at a time over
// minutes, and keeps some of it. Released at once, it costs one collection: at 5,000 pods the
// workbench holds 132 MB one and two minutes after start instead of 160 MB (issue 18: the RSS
// stays flat after the table is full).
func releaseAfterLoad(ctx context.Context, s loadWatcher, quiet, atMost time.Duration, release func()) {
	deadline := time.NewTimer(atMost)
	defer deadline.Stop()
	for _, b := range s.Backends() {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			release()
			return
		case <-s.Ready(b.Name()):
		}
	}
	for {
		changed := s.FleetNotify()
		settled := time.NewTimer(quiet)
		select {
		case <-ctx.Done():
			settled.Stop()
			return
		case <-changed:
			settled.Stop()
			continue
		case <-deadline.C:
		case <-settled.C:
		}
		settled.Stop()
		release()
		return
	}
}
