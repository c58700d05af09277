package action

import (
	"context"
	"errors"
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

// ActionCancel is the journal's action name for a cancellation asked through Cancel.
const ActionCancel = "cancel"

// Cancel cancels the action running on a sandbox for who (zero: the layer's identity) and
// reports whether one was running. Options.AuthorizeCancel may refuse who; the refusal is
// journaled, and so is each cancellation (who cancelled whose action), beside the cancelled
// action's own outcome.
func (l *Layer) Cancel(who Identity, sandboxID string) (bool, error) {
	who = l.who(Request{Identity: who})
	l.mu.Lock()
	t := l.busy[sandboxID]
	var running Task
	if t != nil && t.cancel != nil {
		running = *t
	}
	l.mu.Unlock()
	if running.cancel == nil {
		return false, nil
	}
	e := who.Stamp(state.Entry{Action: ActionCancel, Target: sandboxID, Phase: state.PhaseOutcome, Outcome: state.OutcomeOK,
		Params: map[string]string{"action": string(running.Action), "started_by": running.By.Operator}})
	if l.opts.AuthorizeCancel != nil {
		if err := l.opts.AuthorizeCancel(who, running.Action); err != nil {
			err = fmt.Errorf("cancel %s %s: %w", running.Action, sandboxID, err)
			e.Outcome, e.Error = state.OutcomeRefused, err.Error()
			l.journal.Append(e)
			return false, err
		}
	}
	// Journaled under the lock, before the cancellation: the entry precedes the cancelled
	// action's outcome, and no action can end (or start) on the sandbox in between.
	l.mu.Lock()
	defer l.mu.Unlock()
	ok := l.busy[sandboxID] == t && t.cancel != nil
	if ok {
		l.journal.Append(e)
		t.cancel()
	}
	return ok, nil
}

// busyError refuses an action on a sandbox whose lock another action holds; the refusal's
// journal entry names who holds it (heldParams).
type busyError struct {
	name string // the sandbox, as the message names it
	task Task
}

func (e *busyError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.name, ErrBusy, e.task.holder())
}
func (e *busyError) Unwrap() error { return ErrBusy }

// heldParams are the journal parameters of a refusal because the lock is held: the action
// holding it and who started it (nil for any other error).
func heldParams(err error) map[string]string {
	var be *busyError
	if !errors.As(err, &be) {
		return nil
	}
	return map[string]string{"held_by": be.task.By.Operator, "held_action": string(be.task.Action)}
}
