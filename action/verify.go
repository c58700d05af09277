package action

import (
	"context"
	"fmt"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// staged is a sandbox an action of the layer stood up itself and that the fleet may not list yet.
type staged struct {
	b  backends.Backend
	sb backends.Sandbox
}

// Stage makes sb on b resolvable by the layer until the returned func is called, so actions on a
// sandbox that verify stood up itself (not yet, or never, in the fleet) run through the layer
// like any other: identified, locked, refused in read-only mode, journaled with who asked. Only
// sandboxes marked Actionable are staged as such: the layer still refuses the rest.
func (l *Layer) Stage(b backends.Backend, sb backends.Sandbox) (unstage func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.staged == nil {
		l.staged = map[string]staged{}
	}
	l.staged[sb.ID] = staged{b: b, sb: sb}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if cur, ok := l.staged[sb.ID]; ok && cur.b == b {
			delete(l.staged, sb.ID)
		}
	}
}

func (l *Layer) stagedLookup(id string) (backends.Backend, backends.Sandbox, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.staged[id]
	return s.b, s.sb, ok
}

// Verify runs fn, one verify run of a spec, as an action of the layer. req.SandboxID names the
// spec (verify.HistoryKey: a spec is not a sandbox, so the fleet's sandbox rules do not apply),
// req.Params are journaled with the intent. The run is refused in read-only mode and for
// identities Authorize refuses (it creates and removes containers), one run per spec at a time;
// it is a task whose step follows fn's backends.Progress reports (lint, up, wait, probe,
// teardown...), cancellable with Cancel(req.SandboxID). fn returns params journaled with the
// outcome (the measured profile, the exit status) and an error when the run could not verify.
func (l *Layer) Verify(ctx context.Context, req Request, fn func(ctx context.Context) (map[string]string, error)) error {
	req.Action = backends.ActionVerify
	req.Identity = l.whoIn(ctx, req)
	intent, err := l.journal.Append(req.Identity.Stamp(state.Entry{Action: string(req.Action), Target: req.SandboxID,
		Params: req.Params, Phase: state.PhaseIntent}))
	if err != nil {
		return fmt.Errorf("verify %s: journal unavailable, not acting: %w", req.SandboxID, err)
	}
	if l.opts.ReadOnly {
		return l.outcome(req, intent.Seq, state.OutcomeRefused, nil, fmt.Errorf("verify %s: %w", req.SandboxID, ErrReadOnly))
	}
	if l.Stopping() {
		return l.outcome(req, intent.Seq, state.OutcomeRefused, nil, fmt.Errorf("verify %s: %w", req.SandboxID, ErrStopping))
	}
	if l.opts.Authorize != nil {
		if err := l.opts.Authorize(req.Identity, req.Action); err != nil {
			return l.outcome(req, intent.Seq, state.OutcomeRefused, nil, fmt.Errorf("verify %s: %w", req.SandboxID, err))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	task, err := l.acquire(req, cancel)
	if err != nil {
		return l.outcome(req, intent.Seq, state.OutcomeRefused, heldParams(err), err)
	}
	callerProgress := ctx
	ctx = backends.WithProgress(ctx, func(step string) {
		l.setStep(task, step)
		backends.Progress(callerProgress, "%s", step)
	})
	params, runErr := fn(ctx)
	result, runErr := l.stopped(task, resultOf(ctx, runErr), runErr)
	l.release(task, result, runErr)
	return l.outcome(req, intent.Seq, result, params, runErr)
}
