// Package action is the one action layer the CLI and the TUI share, and the only road to a
// mutation or a probe: it refuses mutating actions in read-only mode and for identities the
// authorizer refuses, requires confirmation for destructive ones, acts only on resources
// identified as sandboxes, runs one action per sandbox at a time, journals an intent before and an
// outcome after every action (with who asked), and keeps a bounded list of running and recent
// tasks. Action kinds are declared once, in backends (backends.ActionSpec).
package action

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/state"
)

// Resolver finds the backend and last known state of sandboxes (the supervisor is one).
type Resolver interface {
	Lookup(id string) (backends.Backend, backends.Sandbox, bool)
	Fleet() []backends.Sandbox
}

// Journal records intents and outcomes durably.
type Journal interface {
	Append(e state.Entry) (state.Entry, error)
}

// Prober runs the escape probe on one sandbox (*probe.Pipeline is the real one).
type Prober interface {
	Probe(ctx context.Context, b backends.Backend, sb backends.Sandbox, req probe.Request) (probe.Report, error)
}

// Errors a user may see; each wraps into a message naming the sandbox.
var (
	ErrReadOnly     = errors.New("refused: rangekeeper is in read-only mode")
	ErrNotConfirmed = errors.New("refused: destructive action not confirmed")
	ErrBusy         = errors.New("refused: another action is running on this sandbox")
	ErrForbidden    = errors.New("refused: not permitted for this operator")
	ErrUnsupported  = errors.New("not supported")
	ErrAmbiguous    = errors.New("ambiguous")
	// ErrStopping refuses an action asked for once the daemon began to stop (Layer.Stop).
	ErrStopping = errors.New("refused: the daemon is stopping")
	// ErrStopped ends an action the daemon's stop cut short when its grace ran out
	// (Layer.Interrupt); its outcome is journaled state.OutcomeInterrupted.
	ErrStopped = errors.New("interrupted: the daemon stopped before the action finished")
)

// Transports an identity can arrive by.
const (
	TransportStandalone = "standalone" // this process owns the backends and the state file
	TransportSocket     = "socket"     // a local client of a daemon
	TransportSSH        = "ssh"        // an operator's SSH session
)

// Identity is who asks for an action and how they reached rangekeeper (Operator, Transport:
// TransportStandalone, TransportSocket or TransportSSH, the SSH key's Fingerprint and the remote
// Source when the transport has them). It travels with every Request, so one layer can serve
// many operators at once. It is state's type, so what journals beneath the layer (the watch's
// alert acknowledgements) carries the same identity.
type Identity = state.Identity

// Request is one action on one sandbox.
type Request struct {
	Action    backends.Action
	SandboxID string
	Params    map[string]string // journaled (secret-looking keys are redacted by state)
	Confirmed bool              // destructive actions need it: the caller asked the operator
	Force     bool              // act on a resource not identified as a sandbox (teardown only)
	Identity  Identity          // who asks; zero: the layer's Options.Identity
	// Bulk: one of many sandboxes acted on at once (marked rows; Many sets it for more than
	// one request), which Options.AuthorizeBulk may refuse.
	Bulk bool
}

// Options configure a Layer.
type Options struct {
	ReadOnly bool
	// Identity acts for requests that name nobody (a standalone process's local operator).
	Identity Identity
	// Authorize refuses actions an identity may not take (roles); nil permits everything.
	// Its error is shown as the reason and journaled.
	Authorize func(who Identity, a backends.Action) error
	// AuthorizeBulk refuses an identity acting on many sandboxes at once (Request.Bulk), after
	// Authorize allowed the action itself; nil permits it. Its error is journaled like Authorize's.
	AuthorizeBulk func(who Identity, a backends.Action) error
	// AuthorizeCancel refuses an identity cancelling the action running on a sandbox (Cancel);
	// nil permits it. Its error is journaled.
	AuthorizeCancel func(who Identity, running backends.Action) error
	// Prober runs escape probes; nil makes probe unavailable, with NoProbe as the reason.
	Prober  Prober
	NoProbe string
	// LockDir holds the host-wide per-sandbox locks every rangekeeper process on this host
	// shares; "" is hostlock.Dir().
	LockDir string

	// Team mode (rangekeeper serve). Admit is asked once per Run, after the checks pass and
	// before the lock (rate limits: Check never consumes it); its error is a journaled refusal.
	// Notify is called, outside the layer's lock, whenever a task starts, reports a step or ends.
	Admit  func(who Identity, a backends.Action) error
	Notify func()
}

// Layer executes requests. The zero value is not usable; use New.
type Layer struct {
	resolver Resolver
	journal  Journal
	opts     Options

	mu     sync.Mutex
	busy   map[string]*Task
	tasks  []*Task // bounded history, newest last
	seq    int
	staged map[string]staged // sandboxes an action of the layer stood up itself (verify)
	// stopping: Stop was called; every new action is refused (ErrStopping).
	stopping bool
}

// MaxTasks bounds the task history.
const MaxTasks = 200

// New builds a layer. A nil journal is refused: every action must be journaled.
func New(r Resolver, j Journal, o Options) *Layer {
	if j == nil {
		panic("action.New: journal is required")
	}
	if o.NoProbe == "" {
		o.NoProbe = "the probe is not wired into this session"
	}
	return &Layer{resolver: r, journal: j, opts: o, busy: map[string]*Task{}}
}

// ReadOnly reports the layer's mode.
func (l *Layer) ReadOnly() bool { return l.opts.ReadOnly }

// Identity is who acts for requests that name nobody.
func (l *Layer) Identity() Identity { return l.opts.Identity }

func (l *Layer) who(req Request) Identity {
	if req.Identity == (Identity{}) {
		return l.opts.Identity
	}
	return req.Identity
}

// whoIn is who acts for req run with ctx: the request's identity, else the one WithIdentity
// put in ctx (a daemon running a client's command line), else the layer's own.
func (l *Layer) whoIn(ctx context.Context, req Request) Identity {
	if req.Identity == (Identity{}) {
		req.Identity, _ = IdentityFrom(ctx)
	}
	return l.who(req)
}

// Check tells, without side effects, whether req would be refused and why. The TUI uses it for
// the disabled reasons of its bindings; Run applies the same checks authoritatively.
func (l *Layer) Check(req Request) error {
	if l.opts.ReadOnly && req.Action.Mutating() {
		return fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, ErrReadOnly)
	}
	if l.Stopping() {
		return fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, ErrStopping)
	}
	if l.opts.Authorize != nil {
		if err := l.opts.Authorize(l.who(req), req.Action); err != nil {
			return fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, err)
		}
	}
	if req.Bulk && l.opts.AuthorizeBulk != nil {
		if err := l.opts.AuthorizeBulk(l.who(req), req.Action); err != nil {
			return fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, err)
		}
	}
	b, sb, ok := l.lookup(req)
	if !ok {
		return fmt.Errorf("%s: %w", req.SandboxID, backends.ErrNotFound)
	}
	if !sb.Actionable && !(req.Force && req.Action == backends.ActionTeardown) {
		return fmt.Errorf("%s: %w", sb.Name, backends.ErrNotSandbox)
	}
	if ok, why := backends.Supports(b, req.Action); !ok {
		return fmt.Errorf("%s: %w", why, ErrUnsupported)
	}
	if req.Action == backends.ActionProbe && l.opts.Prober == nil {
		return fmt.Errorf("probe: %s: %w", l.opts.NoProbe, ErrUnsupported)
	}
	l.mu.Lock()
	t := l.busy[req.SandboxID]
	var held *busyError
	if t != nil {
		held = &busyError{name: sb.Name, task: *t}
		held.task.cancel = nil
	}
	l.mu.Unlock()
	if held != nil {
		return held
	}
	return nil
}

// Run executes req with fn, which receives the resolved backend and sandbox. It journals the
// intent first; refusals are journaled too, so an audit shows what was attempted.
func (l *Layer) Run(ctx context.Context, req Request, fn func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error) error {
	who := l.whoIn(ctx, req)
	req.Identity = who
	intent, err := l.journal.Append(who.Stamp(state.Entry{Action: string(req.Action), Target: req.SandboxID, Params: req.Params, Phase: state.PhaseIntent}))
	if err != nil {
		return fmt.Errorf("%s %s: journal unavailable, not acting: %w", req.Action, req.SandboxID, err)
	}
	results := map[string]string{} // what fn reports for the outcome entry (SetResult)
	ctx = context.WithValue(ctx, resultsKey{}, results)
	outcome := func(result string, err error) error {
		var params map[string]string
		if len(results) > 0 {
			params = results
		}
		return l.outcome(req, intent.Seq, result, params, err)
	}
	if err := l.Check(req); err != nil {
		maps.Copy(results, heldParams(err))
		return outcome(state.OutcomeRefused, err)
	}
	if req.Action.NeedsConfirm() && !req.Confirmed {
		return outcome(state.OutcomeRefused, fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, ErrNotConfirmed))
	}
	if l.opts.Admit != nil {
		if err := l.opts.Admit(who, req.Action); err != nil {
			return outcome(state.OutcomeRefused, fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, err))
		}
	}
	b, sb, _ := l.lookup(req)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	task, err := l.acquire(req, cancel)
	if err != nil {
		maps.Copy(results, heldParams(err))
		return outcome(state.OutcomeRefused, err)
	}
	g, err := l.begin(ctx, req, intent.Seq, b)
	if err != nil {
		l.release(task, state.OutcomeRefused, err)
		return outcome(state.OutcomeRefused, err)
	}
	ctx = g.context(ctx)
	// Steps the backend reports reach the task panel and any reporter the caller attached.
	callerProgress := ctx
	ctx = backends.WithProgress(ctx, func(step string) {
		l.setStep(task, step)
		g.step(step)
		backends.Progress(callerProgress, "%s", step)
	})
	runErr := fn(ctx, b, sb)
	g.end(runErr)
	result, runErr := l.stopped(task, resultOf(ctx, runErr), runErr)
	l.release(task, result, runErr)
	return outcome(result, runErr)
}

// resultOf is the journal outcome of an action that returned err with ctx.
func resultOf(ctx context.Context, err error) string {
	switch {
	case err != nil && (errors.Is(err, context.Canceled) || ctx.Err() != nil):
		return state.OutcomeCancelled
	case err != nil:
		return state.OutcomeFailed
	}
	return state.OutcomeOK
}

// outcome journals the outcome of req's intent (with params learned while acting) and returns
// err, or an error saying the outcome could not be journaled.
func (l *Layer) outcome(req Request, intent uint64, result string, params map[string]string, err error) error {
	who := req.Identity
	e := who.Stamp(state.Entry{Action: string(req.Action), Target: req.SandboxID, Params: params, Phase: state.PhaseOutcome, Intent: intent, Outcome: result})
	if err != nil {
		e.Error = err.Error()
	}
	if _, jerr := l.journal.Append(e); jerr != nil && err == nil {
		return fmt.Errorf("%s %s succeeded but its outcome could not be journaled: %w", req.Action, req.SandboxID, jerr)
	}
	return err
}

// lookup resolves the request's sandbox. A recover or a snapshot deletion may name one that is
// gone from the fleet (a revert cut short after it removed every member; an orphaned snapshot),
// found by its backend's name.
func (l *Layer) lookup(req Request) (backends.Backend, backends.Sandbox, bool) {
	if b, sb, ok := l.stagedLookup(req.SandboxID); ok {
		return b, sb, true
	}
	b, sb, ok := l.resolver.Lookup(req.SandboxID)
	if ok || req.Action != backends.ActionRecover && req.Action != backends.ActionDeleteSnapshot {
		return b, sb, ok
	}
	if b = l.backendNamed(backends.BackendOf(req.SandboxID)); b == nil {
		return nil, sb, false
	}
	return b, backends.Sandbox{ID: req.SandboxID, Name: backends.ShortName(req.SandboxID), Actionable: true}, true
}

// Many runs fn for every request, at most parallel at once (< 1: 4); errs[i] belongs to reqs[i].
// Each fn goes through the layer like a single action (the typed helpers call Run); with more
// than one request, each is marked Bulk (Options.AuthorizeBulk).
func (l *Layer) Many(ctx context.Context, reqs []Request, parallel int, fn func(ctx context.Context, req Request) error) []error {
	if parallel < 1 {
		parallel = 4
	}
	if len(reqs) > 1 {
		reqs = append([]Request(nil), reqs...)
		for i := range reqs {
			reqs[i].Bulk = true
		}
	}
	errs := make([]error, len(reqs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, req := range reqs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(ctx, req)
		})
	}
	wg.Wait()
	return errs
}

func (l *Layer) acquire(req Request, cancel context.CancelFunc) (*Task, error) {
	defer l.notify()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopping {
		return nil, fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, ErrStopping)
	}
	if t := l.busy[req.SandboxID]; t != nil {
		be := &busyError{name: req.SandboxID, task: *t}
		be.task.cancel = nil
		return nil, be
	}
	l.seq++
	t := &Task{ID: l.seq, Action: req.Action, Target: req.SandboxID, By: req.Identity, Started: time.Now(), Status: TaskRunning, cancel: cancel}
	l.busy[req.SandboxID] = t
	l.tasks = append(l.tasks, t)
	if len(l.tasks) > MaxTasks {
		l.tasks = append([]*Task(nil), l.tasks[len(l.tasks)-MaxTasks:]...)
	}
	return t, nil
}

func (l *Layer) release(t *Task, result string, err error) {
	defer l.notify()
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

// notify tells the team a task changed (Options.Notify).
func (l *Layer) notify() {
	if l.opts.Notify != nil {
		l.opts.Notify()
	}
}

// LocalIdentity is the user running this process, acting directly (standalone).
func LocalIdentity() Identity {
	return Identity{Operator: state.Operator(), Transport: TransportStandalone}
}

type identityKey struct{}

// WithIdentity makes who the identity of requests run with ctx that name nobody: a daemon runs
// a client's command line this way, with every request it makes acting for that client.
func WithIdentity(ctx context.Context, who Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, who)
}

// IdentityFrom is the identity WithIdentity put in ctx.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	who, ok := ctx.Value(identityKey{}).(Identity)
	return who, ok
}
