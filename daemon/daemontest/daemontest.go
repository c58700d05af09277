// Package daemontest builds what the team daemon's tests share: a state file and a running
// supervisor, both ended with the test.
package daemontest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
)

// State opens a state file in dir, closed when the test ends.
func State(t testing.TB, dir string) *state.DB {
	t.Helper()
	db, err := state.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Supervisor runs a supervisor over bs until the test ends; it waits at most ready for the
// backends' first lists (0: it does not wait).
func Supervisor(t testing.TB, ready time.Duration, bs ...backends.Backend) *supervisor.Supervisor {
	t.Helper()
	sup := supervisor.New(bs, supervisor.DefaultBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	t.Cleanup(func() { cancel(); wait() })
	if ready > 0 {
		wctx, wc := context.WithTimeout(ctx, ready)
		sup.WaitReady(wctx)
		wc()
	}
	return sup
}

// Layer is a daemon.Options.NewLayer over sup and db (the process's assembly builds the real one).
func Layer(sup *supervisor.Supervisor, db *state.DB) func(action.Options) (*action.Layer, error) {
	return func(o action.Options) (*action.Layer, error) { return action.New(sup, db, o), nil }
}
