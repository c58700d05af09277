package tui

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver inspectlive reads with

	"github.com/rangekeeper/rangekeeper/inspectlive"
)

// The part of Inspect 0.3.260's sample-buffer schema (SampleBufferDatabase.SCHEMA) the poller
// reads. inspectlive's own writer (inspectlive/internal/inspecttest) is internal to it.
const bufferSchema = `
CREATE TABLE task_database (version INTEGER PRIMARY KEY DEFAULT 1, metrics TEXT DEFAULT '[]', last_updated DATETIME DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE samples (id TEXT, epoch INTEGER, data TEXT, sample_metadata TEXT, sample_metadata_hash TEXT, PRIMARY KEY (id, epoch));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT, sample_id TEXT, sample_epoch INTEGER, data TEXT);
CREATE TABLE attachments (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, hash TEXT, content TEXT, UNIQUE (sample_id, sample_epoch, hash));
CREATE TABLE message_pool (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, msg_id TEXT, data TEXT);
CREATE TABLE call_pool (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, hash TEXT, data TEXT);
CREATE INDEX idx_events_sample ON events(sample_id, sample_epoch);
INSERT INTO task_database (version) VALUES (1);
`

// evalWorld is an Inspect data directory with one running eval of task "cybench" by this
// process, and the watcher over it.
type evalWorld struct {
	t  testing.TB
	db *sql.DB
	w  *inspectlive.Watcher
	n  int
}

func newEvalWorld(t testing.TB) *evalWorld {
	t.Helper()
	data := filepath.Join(t.TempDir(), "inspect_ai")
	path := filepath.Join(data, "samplebuffer", "5f2b0c", fmt.Sprintf("2026-12-03T09-00-00+00-00_cybench_tid1.eval.%d.db", os.Getpid()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(bufferSchema); err != nil {
		t.Fatal(err)
	}
	w := inspectlive.New(inspectlive.Config{DataDirs: []string{data}, Rescan: time.Nanosecond, Alive: func(int) bool { return true }})
	t.Cleanup(func() { w.Close(); db.Close() })
	return &evalWorld{t: t, db: db, w: w}
}

// write runs statements in one transaction and bumps the version, as Inspect's writer does.
func (e *evalWorld) write(stmts ...func(tx *sql.Tx) error) {
	e.t.Helper()
	tx, err := e.db.Begin()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range stmts {
		if err := s(tx); err != nil {
			tx.Rollback()
			e.t.Fatal(err)
		}
	}
	if _, err := tx.Exec(`UPDATE task_database SET version = version + 1`); err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
}

// sample starts sample id/epoch with a uuid (the samples row of start_sample).
func (e *evalWorld) sample(id string, epoch int, uuid string) {
	data, _ := json.Marshal(map[string]any{"id": id, "epoch": epoch, "uuid": uuid, "completed": false, "scores": nil,
		"started_at": t0.Add(-time.Minute).Format(time.RFC3339Nano), "input": "solve", "target": "flag"})
	e.write(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO samples (id, epoch, data) VALUES (?, ?, ?)`, id, epoch, string(data))
		return err
	})
}

// event appends one event of the sample (log_events).
func (e *evalWorld) event(id string, epoch int, ev map[string]any) {
	e.n++
	if ev["uuid"] == nil {
		ev["uuid"] = fmt.Sprintf("ev-%d", e.n)
	}
	data, _ := json.Marshal(ev)
	e.write(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO events (event_id, sample_id, sample_epoch, data) VALUES (?, ?, ?, ?)`, ev["uuid"], id, epoch, string(data))
		return err
	})
}

// exec is a completed SandboxEvent at t0+sec.
func execEvent(sec int, cmd string, exit int, output string) map[string]any {
	return map[string]any{"event": "sandbox", "timestamp": t0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano), "action": "exec",
		"cmd": cmd, "result": exit, "output": output, "completed": t0.Add(time.Duration(sec+1) * time.Second).Format(time.RFC3339Nano)}
}

// pendingTool is the in-flight bash() ToolEvent at t0+sec.
func pendingTool(sec int, cmd string) map[string]any {
	return map[string]any{"event": "tool", "timestamp": t0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano), "pending": true,
		"id": "call-1", "function": "bash", "arguments": map[string]any{"cmd": cmd}}
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
