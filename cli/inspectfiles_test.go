package cli

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

// inspectHost is an Inspect data directory and log directory, and a config pointing at them;
// the files in them are written by inspecttest as Inspect 0.3.260 writes them.
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

// taskID is the eval's task id (a shortuuid), in its log's name and its start record.
const taskID = "Zx8Kq2LmTd4Rw"

// buffer creates <data>/samplebuffer/<hash>/<log>.<pid>.db in WAL mode (Inspect 0.3.237+).
func (h *inspectHost) buffer(pid int, task string) *it.DB {
	h.t.Helper()
	return it.NewDB(h.t, it.BufferPath(h.data, it.LogName(task, taskID), pid), true)
}

// started is a sample summary's times: started 90 s ago; total_time is set once the sample
// completes.
func started(completed bool) map[string]any {
	m := map[string]any{"started_at": time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339Nano), "total_time": nil}
	if completed {
		m["total_time"] = 42.5
	}
	return m
}

// trace appends the record Inspect's docker sandbox writes when it runs `docker compose
// --project-name P … config` inside a sample: the one line that ties a project to its sample.
func (h *inspectHost) trace(pid int, project, task, sampleID string, epoch int) {
	h.t.Helper()
	it.AppendTrace(h.t, it.TracePath(h.data, pid), it.TraceSubprocess(0, project, task, sampleID, epoch))
}

// evalLog writes the eval's .eval log with its _journal/start.json (task and model).
func (h *inspectHost) evalLog(task, model string) string {
	h.t.Helper()
	path := filepath.Join(h.logs, it.LogName(task, taskID))
	start := it.StartJSON(task, model)
	start["eval"].(map[string]any)["task_id"] = taskID
	it.WriteEval(h.t, path, false, it.EvalMember{Name: "_journal/start.json", Body: start})
	return path
}
