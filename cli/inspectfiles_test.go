package cli

import (
	"archive/zip"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver inspectlive's reader uses

	"github.com/rangekeeper/rangekeeper/inspectlive"
)

// The files a running Inspect eval process keeps, written as Inspect 0.3.260
// (UKGovernmentBEIS/inspect_ai at 499e6152) writes them. inspectlive's own writers
// (inspectlive/internal/inspecttest) are internal to that package, so these few are repeated
// here: the buffer schema of src/inspect_ai/log/_recorders/buffer/database.py
// (SampleBufferDatabase.SCHEMA), the SandboxEvent and ModelEvent JSON of
// src/inspect_ai/event/_sandbox.py and _model.py, the trace record of
// src/inspect_ai/_util/trace.py (TraceFormatter) with the sample context of
// _util/log_context.py, and the .eval start record of src/inspect_ai/log/_recorders/eval.py.
const inspectBufferSchema = `
CREATE TABLE IF NOT EXISTS task_database (version INTEGER PRIMARY KEY DEFAULT 1, metrics TEXT DEFAULT '[]', last_updated DATETIME DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE samples (id TEXT, epoch INTEGER, data TEXT, sample_metadata TEXT, sample_metadata_hash TEXT, PRIMARY KEY (id, epoch));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT, sample_id TEXT, sample_epoch INTEGER, data TEXT);
CREATE TABLE attachments (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, hash TEXT, content TEXT, UNIQUE (sample_id, sample_epoch, hash));
CREATE TABLE message_pool (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, msg_id TEXT, data TEXT);
CREATE TABLE call_pool (id INTEGER PRIMARY KEY AUTOINCREMENT, sample_id TEXT, sample_epoch INTEGER, hash TEXT, data TEXT);
CREATE INDEX IF NOT EXISTS idx_events_sample ON events(sample_id, sample_epoch);
CREATE INDEX IF NOT EXISTS idx_attachments_hash ON attachments(hash);
INSERT INTO task_database (version) VALUES (1);
`

// inspectHost is an Inspect data directory and log directory, and a config pointing at them.
type inspectHost struct {
	t      *testing.T
	dir    string // the test's directory: config.yaml, state.db
	data   string
	logs   string
	config string
}

func newInspectHost(t *testing.T) *inspectHost {
	t.Helper()
	dir := t.TempDir()
	h := &inspectHost{t: t, dir: dir, data: filepath.Join(dir, "share", "inspect_ai"), logs: filepath.Join(dir, "logs"),
		config: filepath.Join(dir, "config.yaml")}
	writeFile(t, h.config, fmt.Sprintf("inspect:\n  data_dirs: [%q]\n  log_dirs: [%q]\n", h.data, h.logs))
	return h
}

// args are the global flags that point a command at this host's config and state.
func (h *inspectHost) args(cmd ...string) []string {
	return append([]string{"--config", h.config, "--state", filepath.Join(h.dir, "state.db")}, cmd...)
}

// logBaseOf is Inspect's default log file name, <time>_<task>_<task id>.eval (task ids are
// shortuuids: no underscore, so the task is what lies between the first and the last).
func logBaseOf(task string) string {
	return "2026-08-22T10-00-00+00-00_" + task + "_Zx8Kq2LmTd4Rw.eval"
}

// inspectBuffer is one eval's sample buffer, as its process keeps it open.
type inspectBuffer struct {
	db   *sql.DB
	path string
	seq  int
}

// buffer creates <data>/samplebuffer/<hash>/<log>.<pid>.db in WAL mode (Inspect 0.3.237+).
func (h *inspectHost) buffer(pid int, task string) *inspectBuffer {
	h.t.Helper()
	path := filepath.Join(h.data, "samplebuffer", "5f2b0c", fmt.Sprintf("%s.%d.db", logBaseOf(task), pid))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)")
	if err != nil {
		h.t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	h.t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(inspectBufferSchema); err != nil {
		h.t.Fatalf("buffer %s: %v", path, err)
	}
	return &inspectBuffer{db: db, path: path}
}

// write runs one statement and bumps the version in one transaction, as Inspect's writer does.
func (b *inspectBuffer) write(t *testing.T, q string, args ...any) {
	t.Helper()
	tx, err := b.db.Begin()
	if err == nil {
		if _, err = tx.Exec(q, args...); err == nil {
			_, err = tx.Exec(`UPDATE task_database SET version = version + 1, last_updated = CURRENT_TIMESTAMP`)
		}
		if err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}
	if err != nil {
		t.Fatalf("buffer %s: %v", b.path, err)
	}
}

func mustJSON(v any) string {
	j, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(j)
}

// summary is an EvalSampleSummary, the samples row's data: started 90 s ago; total_time is
// set once the sample completes.
func summary(id string, epoch int, uuid string, completed bool) string {
	m := map[string]any{"id": id, "epoch": epoch, "uuid": uuid, "input": "solve the challenge", "target": "flag",
		"completed": completed, "scores": nil, "started_at": time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339Nano), "total_time": nil}
	if completed {
		m["total_time"] = 42.5
	}
	return mustJSON(m)
}

// startSample inserts the samples row (start_sample); completeSample marks it done.
func (b *inspectBuffer) startSample(t *testing.T, id string, epoch int, uuid string) {
	b.write(t, `INSERT INTO samples (id, epoch, data) VALUES (?, ?, ?)`, id, epoch, summary(id, epoch, uuid, false))
}

func (b *inspectBuffer) completeSample(t *testing.T, id string, epoch int, uuid string) {
	b.write(t, `UPDATE samples SET data = ? WHERE id = ? AND epoch = ?`, summary(id, epoch, uuid, true), id, epoch)
}

var fixtureT0 = time.Date(2026, 8, 22, 10, 0, 0, 0, time.UTC)

// exec adds a completed SandboxEvent (log_events), sec seconds into the sample.
func (b *inspectBuffer) exec(t *testing.T, id string, epoch, sec int, cmd string, exit int) {
	b.seq++
	ev := fmt.Sprintf("ev-%d", b.seq)
	at := fixtureT0.Add(time.Duration(sec) * time.Second)
	b.write(t, `INSERT INTO events (event_id, sample_id, sample_epoch, data) VALUES (?, ?, ?, ?)`, ev, id, epoch, mustJSON(map[string]any{
		"event": "sandbox", "timestamp": at.Format(time.RFC3339Nano), "working_start": float64(sec), "uuid": ev, "span_id": "span-1",
		"pending": nil, "metadata": nil, "action": "exec", "cmd": cmd, "options": map[string]any{"cwd": "/root", "timeout": 180},
		"result": exit, "output": "ok", "completed": at.Add(time.Second).Format(time.RFC3339Nano)}))
}

// model adds a completed ModelEvent with its token usage.
func (b *inspectBuffer) model(t *testing.T, id string, epoch, sec, tokens int) {
	b.seq++
	ev := fmt.Sprintf("ev-%d", b.seq)
	b.write(t, `INSERT INTO events (event_id, sample_id, sample_epoch, data) VALUES (?, ?, ?, ?)`, ev, id, epoch, mustJSON(map[string]any{
		"event": "model", "timestamp": fixtureT0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano), "uuid": ev,
		"model": "openai/gpt-test", "input": []any{}, "output": map[string]any{"model": "gpt-test", "choices": []any{},
			"usage": map[string]any{"input_tokens": tokens - 10, "output_tokens": 10, "total_tokens": tokens}}}))
}

// logger adds a LoggerEvent (src/inspect_ai/event/_logger.py) of the proxmoxsandbox logger,
// whose INFO lines name the VMs a sample holds (inspect_proxmox_sandbox after 0.11.0).
func (b *inspectBuffer) logger(t *testing.T, id string, epoch, sec int, msg string) {
	b.seq++
	ev := fmt.Sprintf("ev-%d", b.seq)
	b.write(t, `INSERT INTO events (event_id, sample_id, sample_epoch, data) VALUES (?, ?, ?, ?)`, ev, id, epoch, mustJSON(map[string]any{
		"event": "logger", "timestamp": fixtureT0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano), "uuid": ev,
		"message": map[string]any{"name": nil, "level": "info", "message": msg, "created": 1.7558e12,
			"filename": "_proxmox_sandbox_environment.py", "module": "_proxmox_sandbox_environment", "lineno": 120}}))
}

// trace appends the record Inspect's docker sandbox writes when it runs `docker compose
// --project-name P … config` inside a sample: the one line that ties a project to its sample.
func (h *inspectHost) trace(pid int, project, task, sampleID string, epoch int) {
	h.t.Helper()
	path := filepath.Join(h.data, "traces", fmt.Sprintf("trace-%d.log", pid))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	detail := "docker compose --project-name " + project + " -f /tmp/compose.yaml config"
	fmt.Fprintln(f, mustJSON(map[string]any{"timestamp": fixtureT0.Format(time.RFC3339Nano), "level": "TRACE",
		"message": "Subprocess: " + detail + " (enter)", "action": "Subprocess", "detail": detail, "event": "enter",
		"trace_id": project, "start_time": 1.7558e9, "task": task, "sample_id": sampleID, "epoch": epoch}))
}

// evalLog writes the eval's .eval log with its _journal/start.json (task and model).
func (h *inspectHost) evalLog(task, model string) string {
	h.t.Helper()
	path := filepath.Join(h.logs, logBaseOf(task))
	if err := os.MkdirAll(h.logs, 0o755); err != nil {
		h.t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		h.t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create("_journal/start.json")
	if err == nil {
		_, err = w.Write([]byte(mustJSON(map[string]any{"version": 2, "eval": map[string]any{"eval_id": "EVAL" + task, "run_id": "RUN1",
			"task": task, "task_id": "Zx8Kq2LmTd4Rw", "model": model, "created": "2026-08-22T10:00:00+00:00",
			"sandbox": map[string]any{"type": "docker", "config": nil}}, "plan": map[string]any{}})))
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		h.t.Fatalf("eval log %s: %v", path, err)
	}
	return path
}

// deadPID is the pid of a process this test ran and reaped: an eval process that is gone.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run true: %v", err)
	}
	pid := cmd.Process.Pid
	if inspectlive.PidAlive(pid) {
		t.Skipf("pid %d was reused already", pid)
	}
	return pid
}
