package cli

import (
	"context"
	"fmt"

	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/timeline"
)

// startTimeline records the watched sandboxes' timeline in the state file until stop is called
// (the workbench's lifetime), unless the config turns it off. A recording error is reported on
// stderr when the workbench ends; it never stops the workbench.
func startTimeline(ctx context.Context, f *factory) (stop func()) {
	cfg, err := f.Config()
	if err != nil || cfg.Timeline.Disabled {
		return func() {}
	}
	db, err := f.State()
	if err != nil {
		return func() {}
	}
	sup, err := f.Supervisor()
	if err != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	rec := &timeline.Recorder{Sup: sup, DB: db, Retention: state.Retention{MaxAge: cfg.Timeline.MaxAge, MaxEntries: cfg.Timeline.MaxEntries}}
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(f.ErrOut, "rangekeeper: timeline: %v\n", err)
		}
	}
}
