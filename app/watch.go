package app

import (
	"context"
	"fmt"
	"io"

	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/timeline"
	"github.com/rangekeeper/rangekeeper/watch"
)

// Watcher starts the containment watch once over the supervisor and the state file, with the
// config's severity floor and alert hook; it runs until Close. deferred holds its first step
// (which reads every stored baseline) until Begin: the workbench begins it once the cached
// fleet is painted. A second call returns the same watch, whatever it asks.
func (a *App) Watcher(deferred bool) (*watch.Watcher, error) {
	a.watchMu.Lock() // held while it starts: two callers at once must not start two watches
	defer a.watchMu.Unlock()
	if a.watcher != nil || a.watcherErr != nil {
		return a.watcher, a.watcherErr
	}
	a.watcher, a.watcherErr = a.startWatcher(deferred)
	return a.watcher, a.watcherErr
}

func (a *App) startWatcher(deferred bool) (*watch.Watcher, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	db, err := a.State()
	if err != nil {
		return nil, err
	}
	sup, err := a.Supervisor()
	if err != nil {
		return nil, err
	}
	w, err := watch.New(sup, db, watch.Options{MinSeverity: cfg.Watch.MinSeverity, Hook: cfg.Watch.Hook,
		HookTimeout: cfg.Watch.HookTimeout, Deferred: deferred})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	a.onClose(func() { cancel(); <-done })
	return w, nil
}

// StartTimeline records the watched sandboxes' timeline in the state file until stop is called,
// unless the config turns it off. A recording error is written to errOut at stop; it never
// stops the caller.
func (a *App) StartTimeline(ctx context.Context, errOut io.Writer) (stop func()) {
	cfg, err := a.Config()
	if err != nil || cfg.Timeline.Disabled {
		return func() {}
	}
	db, err := a.State()
	if err != nil {
		return func() {}
	}
	sup, err := a.Supervisor()
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
			fmt.Fprintf(errOut, "rangekeeper: timeline: %v\n", err)
		}
	}
}
