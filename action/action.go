// Package action is the one action layer the CLI and the TUI share: it refuses mutating actions
// in read-only mode, requires confirmation for destructive ones, acts only on resources identified
// as sandboxes, runs one action per sandbox at a time, journals an intent before and an outcome
// after every action, and keeps a bounded list of running and recent tasks.
package action

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// Resolver finds the backend and last known state of a sandbox ID.
type Resolver interface {
	Lookup(id string) (backends.Backend, backends.Sandbox, bool)
}

// Journal records intents and outcomes durably.
type Journal interface {
	Append(e state.Entry) (state.Entry, error)
}

// Errors a user may see; each wraps into a message naming the sandbox.
var (
	ErrReadOnly     = errors.New("refused: rangekeeper is in read-only mode")
	ErrNotConfirmed = errors.New("refused: destructive action not confirmed")
	ErrBusy         = errors.New("refused: another action is running on this sandbox")
	ErrUnsupported  = errors.New("not supported")
)

// Request is one action on one sandbox.
type Request struct {
	Action    backends.Action
	SandboxID string
	Params    map[string]string // journaled (secret-looking keys are redacted by state)
	Confirmed bool              // destructive actions need it: the caller asked the operator
	Force     bool              // act on a resource not identified as a sandbox (teardown only)
}

// Layer executes requests. The zero value is not usable; use New.
type Layer struct {
	resolver Resolver
	journal  Journal
	readOnly bool
	operator string

	mu    sync.Mutex
	busy  map[string]*Task
	tasks []*Task // bounded history, newest last
	seq   int
}

// MaxTasks bounds the task history.
const MaxTasks = 200

// New builds a layer. A nil journal is refused: every action must be journaled.
func New(r Resolver, j Journal, readOnly bool) *Layer {
	if j == nil {
		panic("action.New: journal is required")
	}
	return &Layer{resolver: r, journal: j, readOnly: readOnly, operator: state.Operator(), busy: map[string]*Task{}}
}

// ReadOnly reports the layer's mode.
func (l *Layer) ReadOnly() bool { return l.readOnly }

// Check tells, without side effects, whether req would be refused and why. The TUI uses it to
// show disabled reasons; Run applies the same checks authoritatively.
func (l *Layer) Check(req Request) error {
	if l.readOnly && req.Action.Mutating() {
		return fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, ErrReadOnly)
	}
	b, sb, ok := l.resolver.Lookup(req.SandboxID)
	if !ok {
		return fmt.Errorf("%s: %w", req.SandboxID, backends.ErrNotFound)
	}
	if !sb.Actionable && !(req.Force && req.Action == backends.ActionTeardown) {
		return fmt.Errorf("%s: %w", sb.Name, backends.ErrNotSandbox)
	}
	if ok, why := backends.Supports(b, req.Action); !ok {
		return fmt.Errorf("%s: %w", why, ErrUnsupported)
	}
	l.mu.Lock()
	t := l.busy[req.SandboxID]
	l.mu.Unlock()
	if t != nil {
		return fmt.Errorf("%s: %w (%s since %s)", sb.Name, ErrBusy, t.Action, t.Started.Format(time.TimeOnly))
	}
	return nil
}

// Run executes req with fn, which receives the resolved backend and sandbox. It journals the
// intent first; refusals are journaled too, so an audit shows what was attempted.
func (l *Layer) Run(ctx context.Context, req Request, fn func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error) error {
	intent, err := l.journal.Append(state.Entry{Operator: l.operator, Action: string(req.Action), Target: req.SandboxID, Params: req.Params, Phase: state.PhaseIntent})
	if err != nil {
		return fmt.Errorf("%s %s: journal unavailable, not acting: %w", req.Action, req.SandboxID, err)
	}
	outcome := func(result string, err error) error {
		e := state.Entry{Operator: l.operator, Action: string(req.Action), Target: req.SandboxID, Phase: state.PhaseOutcome, Intent: intent.Seq, Outcome: result}
		if err != nil {
			e.Error = err.Error()
		}
		if _, jerr := l.journal.Append(e); jerr != nil && err == nil {
			return fmt.Errorf("%s %s succeeded but its outcome could not be journaled: %w", req.Action, req.SandboxID, jerr)
		}
		return err
	}
	if err := l.Check(req); err != nil {
		return outcome(state.OutcomeRefused, err)
	}
	if req.Action.Destructive() && !req.Confirmed {
		return outcome(state.OutcomeRefused, fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, ErrNotConfirmed))
	}
	b, sb, _ := l.resolver.Lookup(req.SandboxID)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	task, err := l.acquire(req, cancel)
	if err != nil {
		return outcome(state.OutcomeRefused, err)
	}
	runErr := fn(ctx, b, sb)
	result := state.OutcomeOK
	switch {
	case runErr != nil && (errors.Is(runErr, context.Canceled) || ctx.Err() != nil):
		result = state.OutcomeCancelled
	case runErr != nil:
		result = state.OutcomeFailed
	}
	l.release(task, result, runErr)
	return outcome(result, runErr)
}

func (l *Layer) acquire(req Request, cancel context.CancelFunc) (*Task, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.busy[req.SandboxID]; t != nil {
		return nil, fmt.Errorf("%s: %w (%s since %s)", req.SandboxID, ErrBusy, t.Action, t.Started.Format(time.TimeOnly))
	}
	l.seq++
	t := &Task{ID: l.seq, Action: req.Action, Target: req.SandboxID, Started: time.Now(), Status: TaskRunning, cancel: cancel}
	l.busy[req.SandboxID] = t
	l.tasks = append(l.tasks, t)
	if len(l.tasks) > MaxTasks {
		l.tasks = append([]*Task(nil), l.tasks[len(l.tasks)-MaxTasks:]...)
	}
	return t, nil
}

func (l *Layer) release(t *Task, result string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.busy, t.Target)
	t.Ended = time.Now()
	t.Status = TaskStatus(result)
	if err != nil {
		t.Err = err.Error()
	}
	t.cancel = nil
}
