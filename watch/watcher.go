package watch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

// Source is where the watch reads the fleet and what happened to it (*supervisor.Supervisor).
type Source interface {
	Backends() []backends.Backend
	FleetOf(backend string) ([]backends.Sandbox, uint64)
	Version(backend string) uint64
	Activity(cursor uint64) (out []backends.Activity, next uint64, lost uint64)
	ActivityNotify() <-chan struct{}
	FleetNotify() <-chan struct{}
}

// Store keeps baselines and alerts (*state.DB).
type Store interface {
	Baselines() ([]state.Baseline, error)
	PutBaselines([]state.Baseline) error
	DeleteBaselines(ids []string) error
	AddAlerts([]state.Alert) ([]state.Alert, error)
	SetAlertHook(id uint64, result string) error
	Alerts(q state.AlertQuery) ([]state.Alert, error)
	AckAlert(id uint64, operator string) (state.Alert, error)
	Journal(q state.JournalQuery) ([]state.Entry, error)
	Append(e state.Entry) (state.Entry, error)
	WatchCursor() (uint64, error)
	SetWatchCursor(seq uint64) error
	// Generation lets the watch skip reading a journal nobody has written to since it last
	// looked (a stat each step instead of opening the file).
	Generation() state.Generation
	// Written is closed at the next write to the store by any process; nil when the store
	// cannot tell (the watch then looks every Options.Interval).
	Written() <-chan struct{}
}

// Options configure a Watcher.
type Options struct {
	// MinSeverity is the lowest severity of a new finding that raises an alert (a severity
	// increase always does); zero means MEDIUM.
	MinSeverity sandbox.Severity
	// Hook, when set, receives every alert as JSON on stdin (argv, no shell).
	Hook        []string
	HookTimeout time.Duration // default 10 s
	// Interval is how often the state file is looked at for what other processes journaled
	// (a probe's rebaseline) when nothing else wakes the watch. The default is 2 s where the
	// store cannot report writes, and 30 s (a safety net) where it can: then each write wakes
	// the watch. Fleet changes and activity wake it at once, at most once per MinGap.
	Interval time.Duration
	// MinGap is the shortest time between two steps (default 100 ms): under churn the watch
	// compares a backend's fleet once per gap, not once per event.
	MinGap time.Duration
	// Deferred makes Run's first step (and its read of every stored baseline) wait for Begin,
	// for at most BeginWait (default 5 s). The workbench begins its watch once it has painted
	// the cached fleet: reading 10,000 baselines costs half a second of CPU, which on a 2-core
	// range host held the first frame, then the cached rows, back by as much.
	Deferred  bool
	BeginWait time.Duration
	// Now is the clock (tests).
	Now func() time.Time
}

// Watcher follows a Source, keeps baselines and raises alerts into a Store.
type Watcher struct {
	src   Source
	store Store
	opts  Options
	hooks *hookRunner

	begin     chan struct{} // closed by Begin
	beginOnce sync.Once

	mu       sync.Mutex // guards det, loaded and what follows up to pubMu
	det      *detector
	loaded   bool // det holds the stored baselines (read at the first step, not in New)
	seen     supervisor.Seen
	cursor   uint64
	inFlight map[string]ownAction // sandbox ID → the newest journaled action on it
	intents  map[uint64]string    // intent Seq → sandbox ID
	// journalGen is the state file's generation when the journal was last read (w.mu held).
	journalGen state.Generation

	pubMu   sync.Mutex
	latest  uint64 // ID of the newest alert published
	changed chan struct{}
	errs    []string // the newest store or hook errors, for the operator
}

// New prepares a watcher. The stored baselines are read at its first step or rebaseline, not
// here: a 10,000-sandbox range holds 10,000 of them (about half a second to decode), and the
// workbench builds its watcher before its first frame.
func New(src Source, store Store, opts Options) (*Watcher, error) {
	if opts.MinSeverity == 0 {
		opts.MinSeverity = catalog.SeverityMedium
	}
	if opts.MinGap <= 0 {
		opts.MinGap = 100 * time.Millisecond
		if opts.Interval > 0 {
			opts.MinGap = min(opts.MinGap, opts.Interval)
		}
	}
	if opts.HookTimeout <= 0 {
		opts.HookTimeout = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BeginWait <= 0 {
		opts.BeginWait = 5 * time.Second
	}
	w := &Watcher{src: src, store: store, opts: opts, det: newDetector(opts.MinSeverity, nil), begin: make(chan struct{}),
		seen: supervisor.Seen{}, changed: make(chan struct{}), inFlight: map[string]ownAction{}, intents: map[uint64]string{}}
	w.hooks = &hookRunner{argv: opts.Hook, timeout: opts.HookTimeout, done: w.hookDone}
	return w, nil
}

// Run follows the source until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	defer w.hooks.wait()
	if w.opts.Deferred {
		limit := time.NewTimer(w.opts.BeginWait)
		select {
		case <-w.begin:
		case <-limit.C:
		case <-ctx.Done():
		}
		limit.Stop()
	}
	for {
		// Ask for the notifications before the step reads, so a change during it wakes the next.
		fleet, acts, written := w.src.FleetNotify(), w.src.ActivityNotify(), w.store.Written()
		w.Step()
		gap := time.After(w.opts.MinGap)
		look := time.NewTimer(w.wait(written != nil))
		select {
		case <-ctx.Done():
			look.Stop()
			return
		case <-look.C:
		case <-fleet:
		case <-acts:
		case <-written: // nil where writes are not reported: never ready
		}
		look.Stop()
		select {
		case <-ctx.Done():
			return
		case <-gap:
		}
	}
}

// Begin lets a Deferred watcher take its first step; later calls do nothing.
func (w *Watcher) Begin() { w.beginOnce.Do(func() { close(w.begin) }) }

// wait is how long Run waits when nothing wakes it: the interval, or less when a held alert's
// wait for its cause ends sooner.
func (w *Watcher) wait(notified bool) time.Duration {
	d := w.interval(notified)
	w.mu.Lock()
	next := w.det.nextRelease()
	w.mu.Unlock()
	if !next.IsZero() {
		d = min(d, max(next.Sub(w.opts.Now()), 0))
	}
	return d
}

// interval is how long Run waits for the state file when nothing else wakes it: Options.Interval
// when set, else state.NotifiedPoll with write notifications and 2 s without.
func (w *Watcher) interval(notified bool) time.Duration {
	switch {
	case w.opts.Interval > 0:
		return w.opts.Interval
	case notified:
		return state.NotifiedPoll
	}
	return 2 * time.Second
}

// Step reads what happened since the last step, compares every changed backend's fleet with the
// baselines, stores and publishes the alerts, and runs the hook on each. Run calls it; tests and
// benchmarks may call it directly.
func (w *Watcher) Step() {
	now := w.opts.Now()
	w.mu.Lock()
	if err := w.loadBaselines(); err != nil {
		w.mu.Unlock()
		// Comparing without them would take every sandbox for new and overwrite what is kept.
		w.fail(fmt.Sprintf("baselines not read (nothing compared until they are): %v", err))
		return
	}
	// The fleets are read before the activity: an activity and the posture change it caused
	// that arrive while this step runs are then seen together, or the activity now and the
	// change at the next step, never the change without its cause.
	type changed struct {
		name  string
		fleet []backends.Sandbox
		ready bool
	}
	var fleets []changed
	for _, b := range w.src.Backends() {
		name := b.Name()
		ready := w.ready(name) // before the fleet: a fleet read before the first list proves nothing gone
		if fleet, ok := w.seen.Changed(w.src, name); ok {
			fleets = append(fleets, changed{name, fleet, ready})
		}
	}
	acts, next, _ := w.src.Activity(w.cursor)
	w.cursor = next
	w.rebaselineFromJournal(now) // before the activity: an exec of our own action is attributed to it
	var raised []state.Alert
	var gone []string
	for _, a := range acts {
		if al := w.det.activity(a); al != nil {
			if f, ok := w.inFlight[a.SandboxID]; ok && (f.ended.IsZero() || !a.Time.After(f.ended)) {
				al.Cause = "rangekeeper " + f.by // the action layer's own exec (probe, exec), journaled
			}
			raised = append(raised, *al)
		}
	}
	for _, c := range fleets {
		present := make(map[string]bool, len(c.fleet))
		for _, sb := range c.fleet {
			if !sb.Actionable {
				continue
			}
			present[sb.ID] = true
			raised = append(raised, w.det.observe(sb, now)...)
		}
		if c.ready {
			gone = append(gone, w.det.forgetGone(c.name, present)...)
		}
	}
	raised = append(raised, w.det.release(now)...)
	dirty := w.det.flush()
	w.mu.Unlock()
	if err := w.store.PutBaselines(dirty); err != nil {
		w.fail(fmt.Sprintf("baselines not saved: %v", err))
	}
	if err := w.store.DeleteBaselines(gone); err != nil {
		w.fail(fmt.Sprintf("baselines of removed sandboxes not forgotten: %v", err))
	}
	if len(raised) == 0 {
		return
	}
	stored, err := w.store.AddAlerts(raised)
	if err != nil {
		w.fail(fmt.Sprintf("alerts not saved: %v", err))
		return
	}
	w.publish(stored[len(stored)-1].ID)
	for _, a := range stored {
		w.hooks.run(a)
	}
}

// loadBaselines reads the stored baselines into the detector once (w.mu held); a failed read
// is tried again at the next call.
func (w *Watcher) loadBaselines() error {
	if w.loaded {
		return nil
	}
	bs, err := w.store.Baselines()
	if err != nil {
		return err
	}
	w.det = newDetector(w.opts.MinSeverity, bs)
	w.loaded = true
	return nil
}

// ready reports whether a backend has listed its fleet at least once (before that, an empty
// fleet says nothing about which sandboxes are gone).
func (w *Watcher) ready(backend string) bool {
	r, ok := w.src.(interface{ Ready(string) <-chan struct{} })
	if !ok {
		return false
	}
	ch := r.Ready(backend)
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// rebaselineFromJournal records a new baseline for every sandbox a probe or verify succeeded on
// since the last look. w.mu held.
func (w *Watcher) rebaselineFromJournal(now time.Time) {
	gen := w.store.Generation()
	if w.journalGen.Unchanged(gen, now) {
		return
	}
	w.journalGen = gen // taken before the read: a write during it is read at the next step
	after, err := w.store.WatchCursor()
	if err != nil {
		return
	}
	entries, err := w.store.Journal(state.JournalQuery{After: after})
	if err != nil || len(entries) == 0 {
		return
	}
	for _, e := range entries {
		switch {
		case e.Phase == state.PhaseIntent:
			w.inFlight[e.Target] = ownAction{by: e.Action + " by " + e.Operator}
			w.intents[e.Seq] = e.Target
			continue
		case e.Phase == state.PhaseOutcome:
			if t, ok := w.intents[e.Intent]; ok {
				f := w.inFlight[t]
				f.ended = e.Time
				w.inFlight[t] = f // kept a while: its exec's event may arrive after the outcome
				delete(w.intents, e.Intent)
			}
		}
		if e.Phase != state.PhaseOutcome || e.Outcome != state.OutcomeOK {
			continue
		}
		switch e.Action {
		case string(backends.ActionProbe):
			w.det.rebaseline(e.Target, ReasonProbe, now)
		case "verify":
			w.det.rebaseline(e.Target, ReasonVerify, now)
		case ActionRelease:
			w.det.rebaseline(e.Target, ReasonRelease, now)
		}
	}
	_ = w.store.SetWatchCursor(entries[len(entries)-1].Seq)
}

// ownAction is an action the action layer journaled on a sandbox: "probe by alice", and when
// it ended (zero while it runs).
type ownAction struct {
	by    string
	ended time.Time
}

// ActionRelease is the journaled action name of a release (backends.ActionRelease).
const ActionRelease = "release"

// Rebaseline records sandbox id's current posture as its baseline.
func (w *Watcher) Rebaseline(id, reason string) error {
	w.mu.Lock()
	if err := w.loadBaselines(); err != nil {
		w.mu.Unlock()
		return fmt.Errorf("containment watch: baselines not read: %w", err)
	}
	ok := w.det.rebaseline(id, reason, w.opts.Now())
	dirty := w.det.flush()
	w.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s: %w", id, backends.ErrNotFound)
	}
	return w.store.PutBaselines(dirty)
}

func (w *Watcher) publish(latest uint64) {
	w.pubMu.Lock()
	if latest > w.latest {
		w.latest = latest
	}
	ch := w.changed
	w.changed = make(chan struct{})
	w.pubMu.Unlock()
	close(ch)
}

func (w *Watcher) fail(msg string) {
	w.pubMu.Lock()
	w.errs = append(w.errs, msg)
	if len(w.errs) > 8 {
		w.errs = w.errs[len(w.errs)-8:]
	}
	ch := w.changed
	w.changed = make(chan struct{})
	w.pubMu.Unlock()
	close(ch)
}

func (w *Watcher) hookDone(id uint64, result string) {
	if err := w.store.SetAlertHook(id, result); err != nil {
		w.fail(fmt.Sprintf("alert %d: hook outcome not saved: %v", id, err))
		return
	}
	if result != HookOK {
		w.fail(fmt.Sprintf("alert %d: hook %s", id, result))
		return
	}
	w.publish(0)
}

// Changed is closed at the next alert, hook outcome or error: wait on it, then read.
func (w *Watcher) Changed() <-chan struct{} {
	w.pubMu.Lock()
	defer w.pubMu.Unlock()
	return w.changed
}

// Errors returns the newest errors the watch met (store, hook), oldest first.
func (w *Watcher) Errors() []string {
	w.pubMu.Lock()
	defer w.pubMu.Unlock()
	return append([]string(nil), w.errs...)
}

// Alerts reads the stored alerts.
func (w *Watcher) Alerts(q state.AlertQuery) ([]state.Alert, error) { return w.store.Alerts(q) }

// ActionAck is the journaled action name of an alert acknowledgement.
const ActionAck = "alert-ack"

// Authorizer refuses an acknowledgement who may not make (a viewer's, in team mode: the
// daemon's roster); nil permits every one.
type Authorizer func(who state.Identity) error

// Ack acknowledges an alert for who, journaled like an action (intent, then outcome), unless
// authorize refuses it.
func (w *Watcher) Ack(id uint64, who state.Identity, authorize Authorizer) (state.Alert, error) {
	return Ack(w.store, id, who, authorize, func() { w.publish(0) })
}

// Ack acknowledges alert id in store for who and journals it with who's identity (operator,
// transport, key fingerprint, source); the CLI calls it without a running watcher. authorize,
// when set, is asked after the intent is journaled: its refusal is the journaled outcome
// (refused) and nothing is acknowledged. then runs after a successful acknowledgement.
func Ack(store Store, id uint64, who state.Identity, authorize Authorizer, then func()) (state.Alert, error) {
	params := map[string]string{"alert": fmt.Sprint(id)}
	intent, err := store.Append(who.Stamp(state.Entry{Action: ActionAck, Params: params, Phase: state.PhaseIntent}))
	if err != nil {
		return state.Alert{}, fmt.Errorf("ack %d: journal unavailable, not acknowledging: %w", id, err)
	}
	out := who.Stamp(state.Entry{Action: ActionAck, Params: params, Phase: state.PhaseOutcome, Intent: intent.Seq, Outcome: state.OutcomeOK})
	if authorize != nil {
		if err := authorize(who); err != nil {
			err = fmt.Errorf("ack %d: %w", id, err)
			out.Outcome, out.Error = state.OutcomeRefused, err.Error()
			_, _ = store.Append(out)
			return state.Alert{}, err
		}
	}
	a, err := store.AckAlert(id, who.Operator)
	out.Target = a.SandboxID
	if err != nil {
		out.Outcome, out.Error = state.OutcomeFailed, err.Error()
	}
	if _, jerr := store.Append(out); jerr != nil && err == nil {
		err = fmt.Errorf("ack %d: done, but its outcome could not be journaled: %w", id, jerr)
	}
	if err == nil && then != nil {
		then()
	}
	return a, err
}
