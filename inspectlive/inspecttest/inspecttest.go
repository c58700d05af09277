// Package inspecttest writes the files a running Inspect eval process keeps — the sample-buffer
// database, the trace file, the .eval log — so the readers, and every package that links
// sandboxes to samples through them, are tested against real files.
//
// The shapes follow Inspect 0.3.260 (UKGovernmentBEIS/inspect_ai at 499e6152): the buffer
// schema of src/inspect_ai/log/_recorders/buffer/database.py (SampleBufferDatabase.SCHEMA, with
// the samples metadata columns of 0.3.250 and the message and call pools of 0.3.206), the event
// JSON of src/inspect_ai/event/_sandbox.py, _tool.py, _model.py, _error.py, _sample_limit.py,
// _score.py and _logger.py, the trace records of src/inspect_ai/_util/trace.py (TraceFormatter)
// with the sample context of _util/log_context.py, and the .eval layout of
// src/inspect_ai/log/_recorders/eval.py.
package inspecttest

import (
	"archive/zip"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	_ "modernc.org/sqlite" // the driver the readers use

	"github.com/rangekeeper/rangekeeper/inspectlive"
)

// InspectVersion is the Inspect release whose file formats this package writes.
const InspectVersion = "0.3.260"

// Schema is the sample buffer's schema as Inspect 0.3.260 creates it.
const Schema = `
CREATE TABLE IF NOT EXISTS task_database (
    version INTEGER PRIMARY KEY DEFAULT 1,
    metrics TEXT DEFAULT '[]',
    last_updated DATETIME DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE samples (
    id TEXT,
    epoch INTEGER,
    data TEXT,
    sample_metadata TEXT,
    sample_metadata_hash TEXT,
    PRIMARY KEY (id, epoch)
);
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT,
    sample_id TEXT,
    sample_epoch INTEGER,
    data TEXT
);
CREATE TABLE attachments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sample_id TEXT,
    sample_epoch INTEGER,
    hash TEXT,
    content TEXT,
    UNIQUE (sample_id, sample_epoch, hash)
);
CREATE TABLE message_pool (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sample_id TEXT,
    sample_epoch INTEGER,
    msg_id TEXT,
    data TEXT
);
CREATE TABLE call_pool (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sample_id TEXT,
    sample_epoch INTEGER,
    hash TEXT,
    data TEXT
);
CREATE INDEX IF NOT EXISTS idx_events_sample ON events(sample_id, sample_epoch);
CREATE INDEX IF NOT EXISTS idx_attachments_hash ON attachments(hash);
INSERT INTO task_database (version) VALUES (1);
`

// LegacySchema is the buffer schema of releases before 0.3.206 (no message or call pools, no
// sample metadata columns, attachments unique by hash alone). The reader uses only the columns
// both share.
const LegacySchema = `
CREATE TABLE IF NOT EXISTS task_database (
    version INTEGER PRIMARY KEY DEFAULT 1,
    metrics TEXT DEFAULT '[]',
    last_updated DATETIME DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE samples (id TEXT, epoch INTEGER, data TEXT, PRIMARY KEY (id, epoch));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT, sample_id TEXT, sample_epoch INTEGER, data TEXT);
CREATE TABLE attachments (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, hash TEXT UNIQUE, content TEXT);
CREATE INDEX IF NOT EXISTS idx_events_sample ON events(sample_id, sample_epoch);
CREATE INDEX IF NOT EXISTS idx_attachments_hash ON attachments(hash);
INSERT INTO task_database (version) VALUES (1);
`

// LogName is Inspect's default log file name, <time>_<task>_<task id>.eval (task ids are
// shortuuids: no underscore, so the task is what lies between the first and the last).
func LogName(task, taskID string) string {
	return "2026-08-22T10-00-00+00-00_" + task + "_" + taskID + ".eval"
}

// BufferPath is where an eval process pid keeps the sample buffer of the log logName under an
// Inspect data directory: <data>/samplebuffer/<hash of the log dir>/<log name>.<pid>.db.
func BufferPath(dataDir, logName string, pid int) string {
	return filepath.Join(dataDir, "samplebuffer", "5f2b0c", fmt.Sprintf("%s.%d.db", logName, pid))
}

// TracePath is the trace file of process pid under an Inspect data directory.
func TracePath(dataDir string, pid int) string {
	return filepath.Join(dataDir, "traces", fmt.Sprintf("trace-%d.log", pid))
}

// AppendTrace appends trace lines (TraceSubprocess, TraceOther) to the trace file at path, as
// the running process does.
func AppendTrace(tb testing.TB, path string, lines ...string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range lines {
		if _, err := f.WriteString(l); err != nil {
			f.Close()
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// DB is a writer playing Inspect's part.
type DB struct {
	*sql.DB
	Path string
}

// NewDB creates a buffer database at path. wal picks WAL (Inspect 0.3.237+); otherwise the
// rollback journal of older releases.
func NewDB(tb testing.TB, path string, wal bool) *DB {
	tb.Helper()
	return NewDBWithSchema(tb, path, wal, Schema)
}

// NewDBWithSchema is NewDB with another release's schema.
func NewDBWithSchema(tb testing.TB, path string, wal bool, schema string) *DB {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	mode := "DELETE"
	if wal {
		mode = "WAL"
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)&_pragma=synchronous(OFF)&_pragma=journal_mode("+mode+")")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		tb.Fatal(err)
	}
	d := &DB{DB: db, Path: path}
	tb.Cleanup(func() { db.Close() })
	return d
}

// Write runs statements in one transaction and bumps the version, as Inspect's writer does.
func (d *DB) Write(tb testing.TB, f func(tx *sql.Tx) error) {
	tb.Helper()
	if err := d.TryWrite(f); err != nil {
		tb.Fatal(err)
	}
}

// TryWrite is Write for goroutines other than the test's (which must not call Fatal).
func (d *DB) TryWrite(f func(tx *sql.Tx) error) error {
	tx, err := d.Begin()
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	if _, err := tx.Exec(`UPDATE task_database SET version = version + 1, last_updated = CURRENT_TIMESTAMP`); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Summary is an EvalSampleSummary for the samples row.
func Summary(id string, epoch int, uuid string, extra map[string]any) string {
	m := map[string]any{"id": id, "epoch": epoch, "input": "solve the challenge", "target": "flag",
		"uuid": uuid, "completed": false, "scores": nil, "started_at": "2026-08-22T10:00:00Z"}
	for k, v := range extra {
		m[k] = v
	}
	return MustJSON(m)
}

// StartSample inserts the samples row (start_sample).
func (d *DB) StartSample(tb testing.TB, id string, epoch int, uuid string) {
	tb.Helper()
	if err := d.TryStartSample(id, epoch, uuid); err != nil {
		tb.Fatal(err)
	}
}

// StartSampleWith is StartSample with fields of the summary set or replaced (a started_at
// relative to the test's clock, say).
func (d *DB) StartSampleWith(tb testing.TB, id string, epoch int, uuid string, extra map[string]any) {
	tb.Helper()
	if err := d.tryStartSample(id, epoch, uuid, extra); err != nil {
		tb.Fatal(err)
	}
}

// TryStartSample is StartSample returning its error.
func (d *DB) TryStartSample(id string, epoch int, uuid string) error {
	return d.tryStartSample(id, epoch, uuid, nil)
}

func (d *DB) tryStartSample(id string, epoch int, uuid string, extra map[string]any) error {
	return d.TryWrite(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO samples (id, epoch, data) VALUES (?, ?, ?)`, id, epoch, Summary(id, epoch, uuid, extra))
		return err
	})
}

// CompleteSample updates the row (complete_sample).
func (d *DB) CompleteSample(tb testing.TB, id string, epoch int, uuid string, extra map[string]any) {
	if extra == nil {
		extra = map[string]any{}
	}
	extra["completed"] = true
	d.Write(tb, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE samples SET data = ? WHERE id = ? AND epoch = ?`, Summary(id, epoch, uuid, extra), id, epoch)
		return err
	})
}

// RemoveSample deletes a flushed sample's events and row (remove_samples).
func (d *DB) RemoveSample(tb testing.TB, id string, epoch int) {
	d.Write(tb, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DELETE FROM events WHERE sample_id = ? AND sample_epoch = ?`, id, epoch); err != nil {
			return err
		}
		_, err := tx.Exec(`DELETE FROM samples WHERE id = ? AND epoch = ?`, id, epoch)
		return err
	})
}

// Event is one events row.
type Event struct {
	EventID string
	Data    map[string]any
}

// AddEvents inserts events for a sample (log_events).
func (d *DB) AddEvents(tb testing.TB, id string, epoch int, evs ...Event) {
	tb.Helper()
	if err := d.TryAddEvents(id, epoch, evs...); err != nil {
		tb.Fatal(err)
	}
}

// TryAddEvents is AddEvents returning its error.
func (d *DB) TryAddEvents(id string, epoch int, evs ...Event) error {
	return d.TryWrite(func(tx *sql.Tx) error {
		for _, e := range evs {
			if _, err := tx.Exec(`INSERT INTO events (event_id, sample_id, sample_epoch, data) VALUES (?, ?, ?, ?)`,
				e.EventID, id, epoch, MustJSON(e.Data)); err != nil {
				return err
			}
		}
		return nil
	})
}

// AddAttachment stores a condensed string's content.
func (d *DB) AddAttachment(tb testing.TB, id string, epoch int, hash, content string) {
	d.Write(tb, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO attachments (sample_id, sample_epoch, hash, content) VALUES (?, ?, ?, ?)`, id, epoch, hash, content)
		return err
	})
}

var seq atomic.Int64

func nextID(prefix string) string { return fmt.Sprintf("%s-%06d", prefix, seq.Add(1)) }

// T0 is the fixed time the events' offsets count from (TS(0)).
var T0 = time.Date(2026, 8, 22, 10, 0, 0, 0, time.UTC)

// TS is a fixed event time plus offset seconds.
func TS(sec int) string {
	return T0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano)
}

func base(kind string, sec int) map[string]any {
	return map[string]any{"event": kind, "timestamp": TS(sec), "working_start": float64(sec), "uuid": nextID("ev"),
		"span_id": "span-1", "pending": nil, "metadata": nil}
}

// At is the event with its times (timestamp, completed) counted from base instead of T0, for a
// test whose clock stands elsewhere.
func (e Event) At(base time.Time) Event {
	for _, k := range []string{"timestamp", "completed"} {
		if s, ok := e.Data[k].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				e.Data[k] = base.Add(t.Sub(T0)).Format(time.RFC3339Nano)
			}
		}
	}
	return e
}

// SampleInit is the SampleInitEvent that opens every attempt of a sample.
func SampleInit(sec int) Event {
	m := base("sample_init", sec)
	m["sample"] = map[string]any{"id": 1, "input": "attachment://0a1b2c", "sandbox": nil}
	m["state"] = map[string]any{}
	return Event{EventID: m["uuid"].(string), Data: m}
}

// SandboxExec is a SandboxEvent for a completed exec, with env in its options (never to be shown).
func SandboxExec(sec int, cmd string, exit int, output string) Event {
	m := base("sandbox", sec)
	m["action"] = "exec"
	m["cmd"] = cmd
	m["options"] = map[string]any{"cwd": "/root", "env": map[string]any{"OPENAI_API_KEY": "sk-secret-value"}, "timeout": 180}
	m["result"] = exit
	m["output"] = output
	m["completed"] = TS(sec + 1)
	return Event{EventID: m["uuid"].(string), Data: m}
}

// SandboxRefused is a SandboxEvent whose result is a string with a reason (a refused exec).
func SandboxRefused(sec int, cmd, result, reason string) Event {
	e := SandboxExec(sec, cmd, 0, "")
	e.Data["result"] = result
	e.Data["reason"] = reason
	return e
}

// ToolCall is a ToolEvent for bash(); pending true is the in-flight row, and the completed row
// reuses the same event id, as Inspect's record_pending_tool_event does.
func ToolCall(eventID string, sec int, cmd string, pending bool, errMsg string) Event {
	m := base("tool", sec)
	m["uuid"] = eventID
	m["id"] = "call_" + eventID
	m["function"] = "bash"
	m["arguments"] = map[string]any{"cmd": cmd}
	if pending {
		m["pending"] = true
	} else {
		m["result"] = "ok"
		m["completed"] = TS(sec + 2)
		if errMsg != "" {
			m["error"] = map[string]any{"type": "timeout", "message": errMsg}
		}
	}
	return Event{EventID: eventID, Data: m}
}

// Model is a ModelEvent; a pending one has no usage yet.
func Model(eventID string, sec int, total int, pending bool) Event {
	m := base("model", sec)
	m["uuid"] = eventID
	m["model"] = "openai/gpt-test"
	m["role"] = nil
	m["input"] = []any{}
	m["input_refs"] = [][]int{{0, 3}}
	if pending {
		m["pending"] = true
		m["output"] = map[string]any{"model": "gpt-test", "choices": []any{}}
	} else {
		m["output"] = map[string]any{"model": "gpt-test", "choices": []any{},
			"usage": map[string]any{"input_tokens": total - 10, "output_tokens": 10, "total_tokens": total}}
	}
	return Event{EventID: eventID, Data: m}
}

// Error is an ErrorEvent.
func Error(sec int, msg string) Event {
	m := base("error", sec)
	m["error"] = map[string]any{"message": msg, "traceback": "Traceback…", "traceback_ansi": ""}
	return Event{EventID: m["uuid"].(string), Data: m}
}

// Limit is a SampleLimitEvent.
func Limit(sec int, typ, msg string) Event {
	m := base("sample_limit", sec)
	m["type"] = typ
	m["message"] = msg
	m["limit"] = 1000
	return Event{EventID: m["uuid"].(string), Data: m}
}

// Score is a ScoreEvent.
func Score(sec int, value any) Event {
	m := base("score", sec)
	m["score"] = map[string]any{"value": value, "answer": "flag{x}", "explanation": "matched"}
	m["target"] = "flag{x}"
	m["intermediate"] = false
	return Event{EventID: m["uuid"].(string), Data: m}
}

// Logger is a LoggerEvent of the proxmoxsandbox logger.
func Logger(sec int, msg string) Event {
	m := base("logger", sec)
	m["message"] = map[string]any{"name": nil, "level": "info", "message": msg, "created": 1.7558e12,
		"filename": "_proxmox_sandbox_environment.py", "module": "_proxmox_sandbox_environment", "lineno": 120}
	return Event{EventID: m["uuid"].(string), Data: m}
}

// MustJSON marshals or panics (test data only).
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TraceSubprocess is a trace line for `docker compose --project-name P … config` run inside a
// sample (sampleID may be a string or an int, as Inspect's ids are).
func TraceSubprocess(sec int, project, task string, sampleID any, epoch int) string {
	return MustJSON(map[string]any{"timestamp": TS(sec), "level": "TRACE",
		"message": "Subprocess: docker compose --project-name " + project + " -f /tmp/compose.yaml config (enter)",
		"action":  "Subprocess", "detail": "docker compose --project-name " + project + " -f /tmp/compose.yaml config",
		"event": "enter", "trace_id": nextID("tr"), "start_time": 1.7558e9, "task": task, "sample_id": sampleID, "epoch": epoch}) + "\n"
}

// TraceOther is an unrelated trace line (a model call).
func TraceOther(sec int) string {
	return MustJSON(map[string]any{"timestamp": TS(sec), "level": "TRACE", "message": "Model: generate (exit)",
		"action": "Model", "detail": "generate", "event": "exit", "trace_id": nextID("tr"), "duration": 1.2}) + "\n"
}

// EvalMember is one member of a .eval zip.
type EvalMember struct {
	Name string
	Body any
}

// StartJSON is _journal/start.json's LogStart.
func StartJSON(task, model string) map[string]any {
	return map[string]any{"version": 2, "eval": map[string]any{"eval_id": "EVAL" + task, "run_id": "RUN1", "task": task,
		"task_id": "tid" + task, "model": model, "created": "2026-08-22T10:00:00+00:00",
		"sandbox": map[string]any{"type": "docker", "config": nil}}, "plan": map[string]any{}}
}

// EvalSample is a flushed samples/<id>_epoch_<n>.json.
func EvalSample(id string, epoch int, uuid string, score any) map[string]any {
	return map[string]any{"id": id, "epoch": epoch, "uuid": uuid, "input": "x", "target": "flag",
		"scores": map[string]any{"includes": map[string]any{"value": score}}, "events": []any{}, "messages": []any{}}
}

// WriteEval writes a .eval zip; compressZstd stores members with zip method 93 as Inspect
// 0.3.206+ does.
func WriteEval(tb testing.TB, path string, compressZstd bool, members ...EvalMember) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		tb.Fatal(err)
	}
	zw := zip.NewWriter(f)
	zw.RegisterCompressor(zstd.ZipMethodWinZip, zstd.ZipCompressor())
	method := zip.Deflate
	if compressZstd {
		method = zstd.ZipMethodWinZip
	}
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.Name, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(MustJSON(m.Body))); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // Inspect replaces the log atomically
		tb.Fatal(err)
	}
}

// DeadPID is the pid of a process the test ran and reaped: an eval process that is gone. The
// test is skipped if the pid is already in use again.
func DeadPID(tb testing.TB) int {
	tb.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		tb.Fatalf("run true: %v", err)
	}
	pid := cmd.Process.Pid
	if inspectlive.PidAlive(pid) {
		tb.Skipf("pid %d was reused already", pid)
	}
	return pid
}
