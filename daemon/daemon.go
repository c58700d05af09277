// Package daemon is `rangekeeper serve`: one process that alone owns the backends (one
// supervisor), the state file, the action layer with its per-sandbox locks, and the journal,
// and serves them to every operator of a range: over SSH (daemon/sshd) and, for the local CLI, a
// unix socket (daemon/sockapi). Roles from the operators file are enforced at the action layer.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/operators"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/tui"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/watch"
)

// Options configure a daemon.
type Options struct {
	Supervisor *supervisor.Supervisor // started by the caller
	State      *state.DB
	Layer      action.Options // the base layer options (prober, read-only); roles are added
	// NewLayer builds the one action layer from Layer plus the roles, admission and team
	// notification the daemon adds (package app's; daemontest.Layer in tests).
	NewLayer func(action.Options) (*action.Layer, error)
	// Watch is the containment watch the daemon runs for the whole team: every session shows
	// its alerts, row marks and quarantines, and acknowledges through it. nil: none.
	Watch *watch.Watcher
	// Evals is the one poller of Inspect's live evals every session reads (nil: none).
	Evals         *inspectlive.Watcher
	OperatorsPath string
	// ActionRate and ActionBurst bound the actions each operator may start (0: 1/s, burst 5).
	ActionRate  rate.Limit
	ActionBurst int
	Keys        *keymap.Map // the workbench's keys (nil: default)
	Theme       string
	// Trusted, when set, is asked before the operators file is read, at New and at every
	// Reload: an error (a file others could write, internal/strictmodes) refuses the load,
	// so whoever could write the roster cannot make themselves admin.
	Trusted func() error
	// Verify runs `verify` on a spec for who (verify.RunAction with the daemon's layer), from
	// the author of a session whose role may verify; nil: the author says verify is unavailable.
	Verify func(ctx context.Context, who action.Identity, o verify.Options) verify.Result
}

// Daemon is the running team service.
type Daemon struct {
	opts  Options
	ops   atomic.Pointer[operators.File]
	layer *action.Layer
	hub   *Hub
	ctx   context.Context // actions run in it: a session that drops does not cancel them
	stop  context.CancelFunc

	rmu     sync.Mutex
	limiter map[string]*rate.Limiter

	notice atomic.Pointer[string] // the actions found interrupted, for every session's title
}

// New loads the operators file and builds the action layer with the roles enforced.
func New(o Options) (*Daemon, error) {
	if o.NewLayer == nil {
		return nil, errors.New("daemon: no action layer constructor (Options.NewLayer)")
	}
	f, err := load(o)
	if err != nil {
		journalLoad(o, "start", err, 0)
		return nil, err
	}
	if o.ActionRate == 0 {
		o.ActionRate, o.ActionBurst = 1, 5
	}
	d := &Daemon{opts: o, hub: newHub(o.Supervisor), limiter: map[string]*rate.Limiter{}}
	d.ops.Store(f)
	d.ctx, d.stop = context.WithCancel(context.Background())
	lo := o.Layer
	lo.Authorize = d.Roster().Authorize
	lo.AuthorizeBulk = d.Roster().AuthorizeBulk
	lo.AuthorizeCancel = d.Roster().AuthorizeCancel
	lo.Admit = d.Admit
	lo.Notify = d.hub.TeamChanged
	if d.layer, err = o.NewLayer(lo); err != nil {
		return nil, err
	}
	go d.hub.run(d.ctx.Done())
	go d.watchInterrupted()
	return d, nil
}

// watchInterrupted keeps the notice of interrupted actions (an intent with a write-ahead record
// and no outcome, found at start) current, so every operator sees them until recovered.
func (d *Daemon) watchInterrupted() {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		n := ""
		if recs, err := d.layer.Interrupted(); err == nil && len(recs) > 0 {
			n = fmt.Sprintf("%d interrupted (%s %s…): recover", len(recs), recs[0].Action, backends.ShortName(recs[0].SandboxID))
		}
		if old := d.notice.Swap(&n); old == nil || *old != n {
			d.hub.TeamChanged()
		}
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Notice is what every session shows after the team (interrupted actions), "" for nothing.
func (d *Daemon) Notice() string {
	if n := d.notice.Load(); n != nil {
		return *n
	}
	return ""
}

// Roster answers roles from the current operators file.
func (d *Daemon) Roster() operators.Roster {
	return operators.Roster{File: d.ops.Load}
}

// Operators is the current operators file.
func (d *Daemon) Operators() *operators.File { return d.ops.Load() }

// Layer is the one action layer every client goes through.
func (d *Daemon) Layer() *action.Layer { return d.layer }

// State is the daemon's state file.
func (d *Daemon) State() *state.DB { return d.opts.State }

// Supervisor is the daemon's one supervisor.
func (d *Daemon) Supervisor() *supervisor.Supervisor { return d.opts.Supervisor }

// Hub is the session registry and fan-out.
func (d *Daemon) Hub() *Hub { return d.hub }

// Context outlives every session; actions run in it.
func (d *Daemon) Context() context.Context { return d.ctx }

// Admit applies the per-operator action rate (the layer asks it once per action, after its
// checks pass).
func (d *Daemon) Admit(who action.Identity, a backends.Action) error {
	d.rmu.Lock()
	l := d.limiter[who.Operator]
	if l == nil {
		l = rate.NewLimiter(d.opts.ActionRate, d.opts.ActionBurst)
		d.limiter[who.Operator] = l
	}
	d.rmu.Unlock()
	if !l.Allow() {
		return fmt.Errorf("%w: %s started actions faster than %v a second; wait a moment", action.ErrForbidden, who.Operator, float64(d.opts.ActionRate))
	}
	return nil
}

// Reload re-reads the operators file (SIGHUP) and ends the sessions of keys no longer in it.
// A file that does not parse, or that Options.Trusted refuses, leaves the old one in force;
// either way the load is journaled.
func (d *Daemon) Reload() (ended int, err error) {
	f, err := load(d.opts)
	if err != nil {
		err = fmt.Errorf("operators file not reloaded, the previous one stays in force: %w", err)
		journalLoad(d.opts, "reload", err, 0)
		return 0, err
	}
	d.ops.Store(f)
	journalLoad(d.opts, "reload", nil, len(f.Operators))
	return d.hub.endWhere(func(s *Session) bool {
		if s.Who.Transport != action.TransportSSH {
			return false
		}
		e, ok := f.ByName(s.Who.Operator)
		return !ok || !f.HasKey(s.Who.Operator, s.Who.Fingerprint) || e.Role != s.Role
	}), nil
}

// load checks the files that grant power, then reads the operators file.
func load(o Options) (*operators.File, error) {
	if o.Trusted != nil {
		if err := o.Trusted(); err != nil {
			return nil, err
		}
	}
	return operators.Load(o.OperatorsPath)
}

// ActionLoadOperators is the journal's name for reading the operators file (at start and on
// SIGHUP): a refusal is journaled with its reason, a reload with the count it put in force.
const ActionLoadOperators = "load-operators"

// journalLoad records a load of the operators file; a journal that cannot be written is no
// reason to refuse a reload (the daemon's stderr says it too).
func journalLoad(o Options, when string, err error, n int) {
	if o.State == nil {
		return
	}
	e := state.Entry{Operator: state.Operator(), Action: ActionLoadOperators, Target: o.OperatorsPath, Phase: state.PhaseOutcome,
		Outcome: state.OutcomeOK, Params: map[string]string{"when": when, "operators": fmt.Sprint(n)}}
	if err != nil {
		e.Outcome, e.Error, e.Params = state.OutcomeRefused, err.Error(), map[string]string{"when": when}
	}
	o.State.Append(e)
}

// Model builds a session's workbench: the shared fleet, the shared layer acting as who, the
// keys its role may use (the layer refuses the rest again, journaled).
func (d *Daemon) Model(s *Session) *tui.Model {
	role, who := s.Role, s.Who
	var run func(ctx context.Context, o verify.Options) verify.Result
	if d.opts.Verify != nil && role.Allows(backends.ActionVerify) {
		run = func(ctx context.Context, o verify.Options) verify.Result { return d.opts.Verify(ctx, who, o) }
	}
	return tui.New(tui.Options{Supervisor: d.opts.Supervisor, Actions: d.layer, State: d.opts.State, Keys: d.opts.Keys,
		Theme: d.opts.Theme, Identity: who, ReadOnly: d.opts.Layer.ReadOnly, Verify: run, Watch: d.opts.Watch, Evals: d.opts.Evals,
		Team: tui.TeamOptions{Shared: true, Context: d.ctx, Present: d.hub.Present, Notice: d.Notice,
			Allow:        func(a backends.Action, bulk bool) bool { return role.Allows(a) && (!bulk || role.Bulk()) },
			AuthorizeAck: d.Roster().AuthorizeAck}})
}

// Running counts the actions still running.
func (d *Daemon) Running() int {
	n := 0
	for _, t := range d.layer.Tasks() {
		if t.Status == action.TaskRunning {
			n++
		}
	}
	return n
}

// StopAccepting is the first step of a stop: from now on the layer refuses every new action
// ("the daemon is stopping", journaled with who asked) and a session that joins is ended at
// once, while running actions go on and the sessions already open still show them.
func (d *Daemon) StopAccepting() {
	d.layer.Stop()
	d.hub.close()
}

// Shutdown stops accepting (StopAccepting), lets running actions finish until ctx ends, then
// interrupts what is left (journaled "interrupted": the daemon's stop cut it short; one the
// process could not even close stays an intent without outcome, listed as interrupted at the
// next start). Then it ends every session.
func (d *Daemon) Shutdown(ctx context.Context) {
	d.StopAccepting()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for d.Running() > 0 {
		select {
		case <-ctx.Done():
			d.layer.Interrupt()
			d.stop()
			deadline := time.Now().Add(5 * time.Second)
			for d.Running() > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			d.hub.endWhere(func(*Session) bool { return true })
			return
		case <-tick.C:
		}
	}
	d.hub.endWhere(func(*Session) bool { return true })
	d.stop()
}
