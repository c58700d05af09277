package action

import (
	"context"
	"fmt"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
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
	// interrupted: Interrupt cancelled it (the daemon stops); its outcome says so.
	interrupted bool
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

// BusyBy reports the action running on a sandbox and who started it, if any: rows name the
// operator in team mode ("reverting · alice").
func (l *Layer) BusyBy(sandboxID string) (backends.Action, Identity, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.busy[sandboxID]; t != nil {
		return t.Action, t.By, true
	}
	return "", Identity{}, false
}

// Stop makes the layer refuse every new action from now on (ErrStopping, journaled like any
// refusal) while the running ones go on: a daemon stopping calls it before it waits for them.
func (l *Layer) Stop() {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	l.notify()
}

// Stopping reports whether Stop was called.
func (l *Layer) Stopping() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopping
}

// Interrupt cancels every running action (the daemon's grace ran out) and returns how many.
// Each one's outcome is journaled state.OutcomeInterrupted with ErrStopped, unless it finished
// anyway; its write-ahead record follows the usual rule (kept only when the backend reports the
// sandbox half-done, then listed by Interrupted for recover).
func (l *Layer) Interrupt() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, t := range l.busy {
		if t.cancel != nil {
			t.interrupted = true
			t.cancel()
			n++
		}
	}
	return n
}

// stopped turns the cancellation of a task Interrupt cut short into its own outcome.
func (l *Layer) stopped(t *Task, result string, err error) (string, error) {
	l.mu.Lock()
	interrupted := t.interrupted
	l.mu.Unlock()
	if !interrupted || result != state.OutcomeCancelled {
		return result, err
	}
	return state.OutcomeInterrupted, fmt.Errorf("%w: %w", ErrStopped, err)
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
