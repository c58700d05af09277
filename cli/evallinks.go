package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/rangekeeper/rangekeeper/app"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/inspectlive"
)

// evalsNow is the process's one poller of Inspect's live files (app.App.Evals) after a poll of
// our own: a one-shot command must not wait for the ticker, and the poll it waits for (ours,
// or the background one holding the lock) has read every source once. Inside the daemon the
// poller is already warm (it polls every second, and remembers evals ended within the hour): a
// burst of socket commands must not each poll it again, unless nothing is published yet.
func (f *factory) evalsNow(ctx context.Context) (*inspectlive.Watcher, error) {
	w, err := f.App().Evals()
	if err != nil {
		return nil, err
	}
	if f.served == nil || w.Version() == 0 {
		w.Poll(ctx)
	}
	return w, nil
}

// evalsOrNone is evalsNow for commands whose eval columns are extra (ls, timeline): with the
// linkage disabled they show none; any other failure is said once on stderr, and the command
// goes on.
func (f *factory) evalsOrNone(ctx context.Context) *inspectlive.Watcher {
	w, err := f.evalsNow(ctx)
	if err != nil && !errors.Is(err, app.ErrEvalsOff) {
		fmt.Fprintf(f.ErrOut, "rangekeeper: inspect linkage: %v\n", err)
	}
	return w
}

// lsEval is what `ls -o json|yaml` says of a sandbox's eval: absent when nothing links it.
type lsEval struct {
	Task     string             `json:"task,omitempty"`
	Model    string             `json:"model,omitempty"`
	PID      int                `json:"pid,omitempty"`
	Log      string             `json:"log,omitempty"`
	SampleID string             `json:"sample_id,omitempty"`
	Epoch    int                `json:"epoch,omitempty"`
	UUID     string             `json:"uuid,omitempty"`
	Status   inspectlive.Status `json:"status,omitempty"`
	How      inspectlive.How    `json:"how"`
	Why      string             `json:"why"`
	Orphaned bool               `json:"orphaned,omitempty"`
}

// lsSandbox is one sandbox of `ls -o json|yaml`: the backend's fields, and its eval.
type lsSandbox struct {
	backends.Sandbox
	Eval *lsEval `json:"eval,omitempty"`
}

// linkOf links one sandbox; nil without a watcher or a link.
func linkOf(w *inspectlive.Watcher, sb backends.Sandbox) *lsEval {
	if w == nil {
		return nil
	}
	l := w.Link(sb)
	if l.How == inspectlive.HowUnknown {
		return nil
	}
	return &lsEval{Task: l.Eval.Task, Model: l.Eval.Model, PID: l.Eval.PID, Log: l.Eval.LogPath, SampleID: l.SampleID,
		Epoch: l.Epoch, UUID: l.UUID, Status: l.Status, How: l.How, Why: l.Why, Orphaned: l.Orphaned}
}

// evalCell and sampleCell are ls's EVAL and SAMPLE columns.
func evalCell(e *lsEval) string {
	if e == nil || e.Task == "" {
		return "-"
	}
	s := dash(e.Task)
	if e.Orphaned {
		s += " (orphaned)"
	}
	return s
}

func sampleCell(e *lsEval) string {
	if e == nil {
		return "-"
	}
	if e.SampleID == "" {
		return "? (" + string(e.How) + ")"
	}
	return dash(e.SampleID) + " #" + strconv.Itoa(e.Epoch) + " (" + string(e.How) + ")"
}
