package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/hostlock"
	"github.com/rangekeeper/rangekeeper/state"
)

// PendingStore keeps the write-ahead records of multi-step actions; *state.DB is one. When the
// layer's journal is one too (it is, in rangekeeper), every multi-step action gets a record.
type PendingStore interface {
	PutPending(state.Pending) error
	PendingAction(id uint64) (state.Pending, bool, error)
	PendingActions(sandboxID string) ([]state.Pending, error)
	DeletePending(id uint64) error
}

// ErrUnfinished refuses an action on a sandbox whose earlier action was cut short in a process
// with another state file (which alone holds the record to finish it from).
var ErrUnfinished = errors.New("refused: an earlier action on this sandbox was cut short and is not recovered")

// walActions change a sandbox in several steps, each of which a crash can cut short.
var walActions = map[backends.Action]bool{
	backends.ActionSnapshot: true, backends.ActionRevert: true, backends.ActionTeardown: true,
	backends.ActionProbe: true, backends.ActionDeleteSnapshot: true, backends.ActionReset: true,
}

// guard is what one running action holds beyond the in-process lock: the host-wide sandbox lock
// and its write-ahead record.
type guard struct {
	l     *Layer
	lock  *hostlock.Lock
	store PendingStore
	rec   *state.Pending // nil: the action keeps no record
	// mu orders the record's updates: a backend reports the steps of parallel work (one
	// snapshot per member) from several goroutines at once.
	mu sync.Mutex
	// recovering: a successful recover clears the lock's note of an unfinished action.
	recovering bool
}

func (l *Layer) pendingStore() PendingStore {
	s, _ := l.journal.(PendingStore)
	return s
}

func (l *Layer) statePath() string {
	if p, ok := l.journal.(interface{ Path() string }); ok {
		return p.Path()
	}
	return ""
}

func (l *Layer) lockDir() string {
	if l.opts.LockDir != "" {
		return l.opts.LockDir
	}
	return hostlock.Dir()
}

// begin takes the host-wide lock of the sandbox (refusing when another process acts on it),
// finishes or rolls back the sandbox's interrupted actions this state file knows of, and writes
// the new action's write-ahead record.
func (l *Layer) begin(ctx context.Context, req Request, intent uint64, b backends.Backend) (*guard, error) {
	host, _ := os.Hostname()
	lock, prev, err := hostlock.Acquire(l.lockDir(), hostlock.Holder{Sandbox: req.SandboxID, Action: string(req.Action),
		Operator: req.Identity.Operator, PID: os.Getpid(), Host: host, Since: time.Now().UTC(), State: l.statePath()})
	var held *hostlock.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%s: %w (another rangekeeper process: %s)", req.SandboxID, ErrBusy, held.Holder)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.SandboxID, err)
	}
	g := &guard{l: l, lock: lock, store: l.pendingStore(), recovering: req.Action == backends.ActionRecover}
	if prev != nil && prev.State != l.statePath() {
		lock.Release()
		return nil, fmt.Errorf("%s: %w: %s (record %d) in state file %s; run `rangekeeper --state %s recover %s` first",
			req.SandboxID, ErrUnfinished, prev.Action, prev.Record, prev.State, prev.State, req.SandboxID)
	}
	if g.store != nil && req.Action != backends.ActionRecover {
		if err := l.recoverAll(ctx, req, b, g); err != nil {
			lock.Release()
			return nil, err
		}
	}
	if g.store == nil || !walActions[req.Action] {
		return g, nil
	}
	g.rec = &state.Pending{ID: intent, Action: string(req.Action), SandboxID: req.SandboxID, Backend: backends.BackendOf(req.SandboxID),
		Operator: req.Identity.Operator, PID: os.Getpid(), Host: host, Started: time.Now().UTC(), Params: req.Params}
	if b != nil {
		g.rec.Backend = b.Name()
	}
	if err := g.store.PutPending(*g.rec); err != nil {
		lock.Release()
		return nil, fmt.Errorf("%s %s: write-ahead record unavailable, not acting: %w", req.Action, req.SandboxID, err)
	}
	if err := lock.SetRecord(l.statePath(), intent); err != nil {
		_ = g.store.DeletePending(intent)
		lock.Release()
		return nil, fmt.Errorf("%s %s: %w", req.Action, req.SandboxID, err)
	}
	crashPoint(string(req.Action), "recorded")
	return g, nil
}

// context lets the backend record its plan in the write-ahead record.
func (g *guard) context(ctx context.Context) context.Context {
	if g.rec == nil {
		return ctx
	}
	return backends.WithPlan(ctx, func(plan json.RawMessage) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.rec.Plan = plan
		if err := g.store.PutPending(*g.rec); err != nil {
			return fmt.Errorf("write-ahead record: %w", err)
		}
		crashPoint(g.rec.Action, "planned")
		return nil
	})
}

// step appends a progress step to the record (durably: a crash right after it leaves it).
func (g *guard) step(step string) {
	if g.rec != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.rec.Steps = append(g.rec.Steps, step)
		_ = g.store.PutPending(*g.rec)
		crashPoint(g.rec.Action, step)
	}
}

// end closes the record: removed when the action succeeded or failed cleanly, kept (marked
// failed) when the backend says it left the sandbox half-done.
func (g *guard) end(runErr error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.rec != nil {
		crashPoint(g.rec.Action, "ended")
		if runErr != nil && errors.Is(runErr, backends.ErrInterrupted) {
			g.rec.Failed = runErr.Error()
			_ = g.store.PutPending(*g.rec)
		} else {
			_ = g.store.DeletePending(g.rec.ID)
			_ = g.lock.SetRecord("", 0)
		}
	}
	if g.recovering && runErr == nil {
		_ = g.lock.SetRecord("", 0)
	}
	g.lock.Release()
}

// recoverAll finishes or rolls back every interrupted action on the sandbox before a new one
// starts (each journaled as a recover of its own).
func (l *Layer) recoverAll(ctx context.Context, req Request, b backends.Backend, g *guard) error {
	recs, err := g.store.PendingActions(req.SandboxID)
	if err != nil {
		return fmt.Errorf("%s: write-ahead records: %w", req.SandboxID, err)
	}
	for _, rec := range recs {
		backends.Progress(ctx, "finishing the interrupted %s of %s first (record %d, %s)", rec.Action, req.SandboxID, rec.ID, rec.LastStep())
		if _, err := l.recoverOne(ctx, req.Identity, b, rec); err != nil {
			return fmt.Errorf("%s: the interrupted %s (record %d) could not be finished: %w", req.SandboxID, rec.Action, rec.ID, err)
		}
	}
	return g.lock.SetRecord("", 0)
}

// recoverOne finishes or rolls back one record, journaled as a recover, and removes the record.
func (l *Layer) recoverOne(ctx context.Context, who Identity, b backends.Backend, rec state.Pending) (string, error) {
	intent, err := l.journal.Append(state.Entry{Operator: who.Operator, Transport: who.Transport, Fingerprint: who.Fingerprint, Source: who.Source, Action: string(backends.ActionRecover), Target: rec.SandboxID,
		Params: map[string]string{"record": strconv.FormatUint(rec.ID, 10), "of": rec.Action, "step": rec.LastStep()}, Phase: state.PhaseIntent})
	if err != nil {
		return "", fmt.Errorf("journal unavailable, not recovering: %w", err)
	}
	did, rerr := l.recoverRecord(ctx, b, rec)
	e := state.Entry{Operator: who.Operator, Transport: who.Transport, Fingerprint: who.Fingerprint, Source: who.Source, Action: string(backends.ActionRecover), Target: rec.SandboxID, Phase: state.PhaseOutcome,
		Intent: intent.Seq, Outcome: state.OutcomeOK, Params: map[string]string{"result": did}}
	if rerr != nil {
		e.Outcome, e.Error = state.OutcomeFailed, rerr.Error()
	}
	_, _ = l.journal.Append(e)
	if rerr != nil {
		return did, rerr
	}
	return did, l.pendingStore().DeletePending(rec.ID)
}

func (l *Layer) recoverRecord(ctx context.Context, b backends.Backend, rec state.Pending) (string, error) {
	switch backends.Action(rec.Action) {
	case backends.ActionExec, backends.ActionCopy:
		return "nothing to finish: one step", nil
	case backends.ActionProbe:
		return recoverProbe(ctx, b, rec)
	}
	if b == nil {
		return "", fmt.Errorf("backend %s is not configured in this session", rec.Backend)
	}
	r, ok := b.(backends.Recoverer)
	if !ok {
		return "", fmt.Errorf("%s: %s cannot recover a %s", rec.SandboxID, b.Kind(), rec.Action)
	}
	return r.Recover(ctx, rec)
}

// Interrupted lists the write-ahead records whose action is not running any more (its process
// died, or it failed half-done), oldest first: what `recover` and the workbench show.
func (l *Layer) Interrupted() ([]state.Pending, error) {
	s := l.pendingStore()
	if s == nil {
		return nil, nil
	}
	recs, err := s.PendingActions("")
	if err != nil {
		return nil, err
	}
	out := recs[:0]
	for _, r := range recs {
		l.mu.Lock()
		running := l.busy[r.SandboxID] != nil
		l.mu.Unlock()
		if running && r.Failed == "" {
			continue
		}
		if !running && r.Failed == "" && hostlock.Held(l.lockDir(), r.SandboxID) {
			continue // another process is still at it
		}
		out = append(out, r)
	}
	return out, nil
}

// Recover finishes or rolls back the sandbox's interrupted actions (record 0: every one), even
// when the sandbox has no member left: a journaled action of its own, refused in read-only mode.
func (l *Layer) Recover(ctx context.Context, req Request, record uint64) ([]string, error) {
	req.Action = backends.ActionRecover
	req.Params = map[string]string{"record": strconv.FormatUint(record, 10)}
	var did []string
	err := l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		recs, err := l.pendingStore().PendingActions(req.SandboxID)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if record != 0 && rec.ID != record {
				continue
			}
			what, err := l.recoverOne(ctx, l.who(req), b, rec)
			if err != nil {
				return fmt.Errorf("record %d (%s): %w", rec.ID, rec.Action, err)
			}
			did = append(did, fmt.Sprintf("%s (record %d): %s", rec.Action, rec.ID, what))
		}
		if len(did) == 0 {
			did = append(did, "nothing was pending")
		}
		return nil
	})
	return did, err
}

// backendNamed finds a configured backend by name, for a sandbox no longer in the fleet.
func (l *Layer) backendNamed(name string) backends.Backend {
	if bs, ok := l.resolver.(interface{ Backends() []backends.Backend }); ok {
		for _, b := range bs.Backends() {
			if b.Name() == name {
				return b
			}
		}
	}
	return nil
}
