package tui

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

// evalWorld is an Inspect data directory with one running eval of task "cybench" by this
// process (its sample buffer written by inspecttest as Inspect 0.3.260 writes it), and the
// watcher over it.
type evalWorld struct {
	t  testing.TB
	db *it.DB
	w  *inspectlive.Watcher
}

func newEvalWorld(t testing.TB) *evalWorld {
	t.Helper()
	data := filepath.Join(t.TempDir(), "inspect_ai")
	db := it.NewDB(t, it.BufferPath(data, "2026-12-03T09-00-00+00-00_cybench_tid1.eval", os.Getpid()), true)
	w := inspectlive.New(inspectlive.Config{DataDirs: []string{data}, Rescan: time.Nanosecond, Alive: func(int) bool { return true }})
	t.Cleanup(func() { w.Close() })
	return &evalWorld{t: t, db: db, w: w}
}

// sample starts sample id/epoch with a uuid (the samples row of start_sample), a minute before t0.
func (e *evalWorld) sample(id string, epoch int, uuid string) {
	e.t.Helper()
	e.db.StartSampleWith(e.t, id, epoch, uuid, map[string]any{"started_at": t0.Add(-time.Minute).Format(time.RFC3339Nano)})
}

// event appends one event of the sample (log_events), its times counted from t0.
func (e *evalWorld) event(id string, epoch int, ev it.Event) {
	e.t.Helper()
	e.db.AddEvents(e.t, id, epoch, ev.At(t0))
}

// poll runs the watcher's tick until it publishes (its rescan finds a new buffer first).
func (e *evalWorld) poll() {
	e.t.Helper()
	for range 3 {
		if e.w.Poll(context.Background()) {
			return
		}
	}
	e.t.Fatal("the watcher published nothing")
}
