package action

import (
	"context"
	"fmt"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
)

// TaskStatus is a task's state; finished tasks carry the journal outcome.
type TaskStatus string

const TaskRunning TaskStatus = "running"

// Task is one running or recent action, shown in the task panel.
type Task struct {
	ID      int
	Action  backends.Action
	Target  string
	By      Identity // who started it
	Started time.Time
	Ended   time.Time
	Status  TaskStatus
	Err     string
	Step    string // the latest progress step the backend reported (backends.Progress)
	cancel  context.CancelFunc
}

// holder says what holds a sandbox's lock, for refusals: "teardown since 09:00:00 by alice".
func (t *Task) holder() string {
	s := fmt.Sprintf("%s since %s", t.Action, t.Started.Format(time.TimeOnly))
	if t.By.Operator != "" {
		s += " by " + t.By.Operator
	}
	return s
}

// Tasks returns copies of the running and recent tasks, newest first.
func (l *Layer) Tasks() []Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Task, 0, len(l.tasks))
	for i := len(l.tasks) - 1; i >= 0; i-- {
		t := *l.tasks[i]
		t.cancel = nil
		out = append(out, t)
	}
	return out
}

// setStep records a running task's latest progress step, for the task panel.
func (l *Layer) setStep(t *Task, step string) {
	l.mu.Lock()
	t.Step = step
	l.mu.Unlock()
	l.notify()
}

// Busy reports the action running on a sandbox, if any.
func (l *Layer) Busy(sandboxID string) (backends.Action, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.busy[sandboxID]; t != nil {
		return t.Action, true
	}
	return "", false
}

// Cancel cancels the running task on a sandbox; it reports whether one was running.
func (l *Layer) Cancel(sandboxID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.busy[sandboxID]
	if t == nil || t.cancel == nil {
		return false
	}
	t.cancel()
	return true
}
