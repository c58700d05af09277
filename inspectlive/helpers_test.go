package inspectlive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

// world is an Inspect data directory and log directory laid out as a running eval leaves them.
type world struct {
	t    *testing.T
	data string
	logs string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	return &world{t: t, data: filepath.Join(root, "data", "inspect_ai"), logs: filepath.Join(root, "logs")}
}

// logBase is Inspect's default log file name for a task.
func logBase(task, taskID string) string { return it.LogName(task, taskID) }

// buffer creates the sample buffer of one eval of process pid.
func (w *world) buffer(pid int, task, taskID string) *it.DB {
	return it.NewDB(w.t, it.BufferPath(w.data, logBase(task, taskID), pid), true)
}

// evalLog writes the eval's .eval with its start record and any flushed samples.
func (w *world) evalLog(task, taskID, model string, samples ...it.EvalMember) string {
	path := filepath.Join(w.logs, logBase(task, taskID))
	start := it.StartJSON(task, model)
	start["eval"].(map[string]any)["task_id"] = taskID
	start["eval"].(map[string]any)["eval_id"] = "E-" + taskID
	members := append([]it.EvalMember{{Name: "_journal/start.json", Body: start}}, samples...)
	it.WriteEval(w.t, path, true, members...)
	return path
}

func (w *world) trace(pid int, lines ...string) {
	it.AppendTrace(w.t, it.TracePath(w.data, pid), lines...)
}

func (w *world) control(pid int) {
	path := filepath.Join(w.data, "control", fmt.Sprintf("%d.json", pid))
	os.MkdirAll(filepath.Dir(path), 0o755)
	b, _ := json.Marshal(map[string]any{"pid": pid, "socket_path": filepath.Join(w.data, "control", fmt.Sprintf("%d.sock", pid)),
		"started_at": "2026-08-22T10:00:00+00:00", "run_id": "RUN1", "eval_set_id": nil, "api_version": 1})
	os.WriteFile(path, b, 0o644)
}

func (w *world) watcher() *inspectlive.Watcher {
	wt := inspectlive.New(inspectlive.Config{DataDirs: []string{w.data}, LogDirs: []string{w.logs}, Rescan: 1})
	w.t.Cleanup(func() { wt.Close() })
	return wt
}

func pollN(wt *inspectlive.Watcher, n int) {
	for range n {
		wt.Poll(context.Background())
	}
}

func evalByTask(t *testing.T, wt *inspectlive.Watcher, task string) inspectlive.Eval {
	t.Helper()
	for _, e := range wt.Evals() {
		if e.Task == task {
			return e
		}
	}
	t.Fatalf("no eval of task %s in %+v", task, wt.Evals())
	return inspectlive.Eval{}
}
