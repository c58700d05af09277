package inspectlive

import (
	"context"
	"errors"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive/buffer"
	"github.com/rangekeeper/rangekeeper/inspectlive/evallog"
	"github.com/rangekeeper/rangekeeper/inspectlive/trace"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// Config tunes a Watcher. The zero value watches DefaultDataDirs every second.
type Config struct {
	// DataDirs are Inspect data directories to read (one per eval host mount or user);
	// empty means DefaultDataDirs().
	DataDirs []string
	// LogDirs are where the .eval logs are written (--log-dir), searched for flushed samples'
	// scores; without them a flushed sample's score is "unknown".
	LogDirs []string
	// Interval between polls (default 1 s). An idle poll costs one stat and one indexed read per
	// buffer and one stat per trace file.
	Interval time.Duration
	// Rescan is how often the data directories are listed for new evals (default 2 s).
	Rescan time.Duration
	// Retain is how long an ended eval stays in the snapshot, so the sandboxes it left behind are
	// still linked and shown orphaned (default 1 h).
	Retain time.Duration
	// Alive tells whether a pid runs (default PidAlive); a seam for tests.
	Alive func(pid int) bool
}

func (c *Config) defaults() {
	if len(c.DataDirs) == 0 {
		c.DataDirs = DefaultDataDirs()
	}
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.Rescan <= 0 {
		c.Rescan = 2 * time.Second
	}
	if c.Retain <= 0 {
		c.Retain = time.Hour
	}
	if c.Alive == nil {
		c.Alive = PidAlive
	}
}

// evalSource is one eval's buffer reader and what the poller derived from it.
type evalSource struct {
	file     BufferFile
	rd       *buffer.Reader
	samples  []SampleState // the reader's state as of the last change
	logPath  string
	logMod   time.Time // the log's mtime when last read, so an unchanged log is not reread
	start    evallog.Start
	startOK  bool
	flushed  map[buffer.Key]evallog.Sample
	problem  string
	stale    bool
	endedAt  time.Time
	alive    bool
	logProbl string
	scoreMod time.Time // the log's mtime when flushed scores were last looked for
}

type traceSource struct {
	file   TraceFile
	rd     *trace.Reader
	alive  bool
	goneAt time.Time // when the file went (gzipped at exit): its projects stay for Retain
}

// Watcher owns every source under a set of data directories, polls them, and publishes an
// immutable snapshot. All read methods are safe for any number of concurrent callers and
// never touch a file, except Output and Resolve, which read on demand with a bounded wait.
type Watcher struct {
	cfg Config

	pollMu   sync.Mutex // one poll at a time
	srcMu    sync.RWMutex
	evals    map[EvalKey]*evalSource
	traces   map[string]*traceSource
	controls map[int]ControlFile
	lastScan time.Time
	problems []string
	dirty    bool

	snap     atomic.Pointer[snapshot]
	notifyMu sync.Mutex
	notify   chan struct{}

	startOnce sync.Once
	closeOnce sync.Once
	stop      chan struct{}
	done      chan struct{}
}

// New makes a watcher; call Start to poll in the background, or Poll to drive it yourself.
func New(cfg Config) *Watcher {
	cfg.defaults()
	w := &Watcher{
		cfg:      cfg,
		evals:    map[EvalKey]*evalSource{},
		traces:   map[string]*traceSource{},
		controls: map[int]ControlFile{},
		notify:   make(chan struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		dirty:    true,
	}
	w.snap.Store(&snapshot{byKey: map[EvalKey]int{}, byUUID: map[string]sampleRef{}, projects: map[string]tracedProject{}, alive: map[int]bool{}})
	return w
}

// Start polls every Interval until Close. Calling it twice is harmless.
func (w *Watcher) Start() {
	w.startOnce.Do(func() {
		go func() {
			defer close(w.done)
			t := time.NewTicker(w.cfg.Interval)
			defer t.Stop()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-w.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			for {
				w.Poll(ctx)
				select {
				case <-w.stop:
					return
				case <-t.C:
				}
			}
		}()
	})
}

// Close stops polling and releases every database handle. The last snapshot stays readable.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.stop)
		// Never started: consume the Once so a later Start cannot run, and close done ourselves.
		w.startOnce.Do(func() { close(w.done) })
		<-w.done
		w.pollMu.Lock()
		defer w.pollMu.Unlock()
		for _, s := range w.evals {
			s.rd.Close()
		}
	})
	return nil
}

// Poll runs one tick: rescan (every Rescan), pid liveness, each buffer's version check and
// changed rows, each trace's new lines; publishes a new snapshot when anything moved. It
// returns whether it did.
func (w *Watcher) Poll(ctx context.Context) bool {
	w.pollMu.Lock()
	defer w.pollMu.Unlock()
	select {
	case <-w.stop:
		return false // closed: reopening the databases would leak their handles
	default:
	}
	now := time.Now()
	if now.Sub(w.lastScan) >= w.cfg.Rescan {
		w.rescan(now)
	}
	for _, s := range w.evals {
		if a := w.cfg.Alive(s.file.PID); a != s.alive {
			s.alive, w.dirty = a, true
		}
		w.pollEval(ctx, s, now)
	}
	for path, t := range w.traces {
		if a := w.cfg.Alive(t.file.PID); a != t.alive {
			t.alive, w.dirty = a, true
		}
		changed, err := t.rd.Poll()
		if err != nil {
			w.problems = appendProblem(w.problems, err.Error())
		}
		if changed {
			w.dirty = true
		}
		switch {
		case !t.rd.Gone():
			t.goneAt = time.Time{}
		case t.goneAt.IsZero():
			t.goneAt = now
		case now.Sub(t.goneAt) > w.cfg.Retain:
			w.srcMu.Lock()
			delete(w.traces, path)
			w.srcMu.Unlock()
			w.dirty = true
		}
	}
	if !w.dirty {
		return false
	}
	w.dirty = false
	w.publish(now)
	return true
}

func appendProblem(ps []string, p string) []string {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}

// rescan lists the data directories: new buffers and traces get readers, control files are
// reread, evals ended longer than Retain are dropped.
func (w *Watcher) rescan(now time.Time) {
	w.lastScan = now
	d := Scan(w.cfg.DataDirs)
	w.srcMu.Lock()
	defer w.srcMu.Unlock()
	w.problems = d.Problems
	for _, s := range w.evals {
		if s.logPath == "" || !s.startOK {
			w.findLog(s)
		}
		w.retryScores(s)
	}
	for _, b := range d.Buffers {
		k := EvalKey(b.Path)
		if _, ok := w.evals[k]; ok {
			continue
		}
		s := &evalSource{file: b, rd: buffer.Open(b.Path), flushed: map[buffer.Key]evallog.Sample{}, alive: w.cfg.Alive(b.PID)}
		w.findLog(s)
		w.evals[k] = s
		w.dirty = true
	}
	for k, s := range w.evals {
		if !s.endedAt.IsZero() && now.Sub(s.endedAt) > w.cfg.Retain {
			s.rd.Close()
			delete(w.evals, k)
			w.dirty = true
		}
	}
	for _, t := range d.Traces {
		if t.Gzipped && now.Sub(t.ModTime) > w.cfg.Retain {
			continue // an old finished run: its sandboxes, if any, are long past linking
		}
		if _, ok := w.traces[t.Path]; !ok {
			w.traces[t.Path] = &traceSource{file: t, rd: trace.Open(t.Path), alive: w.cfg.Alive(t.PID)}
		}
	}
	controls := map[int]ControlFile{}
	for _, c := range d.Controls {
		controls[c.PID] = c
	}
	if len(controls) != len(w.controls) {
		w.dirty = true
	}
	w.controls = controls
}

// findLog locates the .eval the buffer belongs to and reads its start record.
func (w *Watcher) findLog(s *evalSource) {
	if s.logPath == "" {
		s.logPath = evallog.Find(w.cfg.LogDirs, s.file.LogBase)
	}
	if s.logPath == "" || s.startOK {
		return
	}
	st, err := os.Stat(s.logPath)
	if err != nil {
		s.logProbl = "eval log " + s.logPath + ": " + err.Error()
		return
	}
	if st.ModTime().Equal(s.logMod) {
		return
	}
	s.logMod = st.ModTime()
	start, err := evallog.ReadStart(s.logPath)
	if err != nil {
		s.logProbl = err.Error()
		return
	}
	s.start, s.startOK, s.logProbl = start, true, ""
	w.dirty = true
}

func (w *Watcher) pollEval(ctx context.Context, s *evalSource, now time.Time) {
	if s.rd.Ended() {
		return
	}
	changed, err := s.rd.Poll(ctx)
	stale := errors.Is(err, buffer.ErrStale)
	problem := ""
	if err != nil && !stale {
		problem = err.Error()
	}
	if stale != s.stale || problem != s.problem {
		s.stale, s.problem, w.dirty = stale, problem, true
	}
	if s.rd.Ended() && s.endedAt.IsZero() {
		s.endedAt = now
	}
	if !changed {
		return
	}
	w.dirty = true
	s.samples = s.rd.Samples()
	w.scoreFlushed(s)
}

// retryScores looks again for flushed samples' outcomes once the log has changed (a sample may
// leave the buffer a moment before its member lands, or the log may be found later).
func (w *Watcher) retryScores(s *evalSource) {
	if s.logPath == "" {
		return
	}
	st, err := os.Stat(s.logPath)
	if err != nil || st.ModTime().Equal(s.scoreMod) {
		return
	}
	n := len(s.flushed)
	w.scoreFlushed(s)
	if len(s.flushed) != n {
		w.dirty = true
	}
}

// scoreFlushed fetches the outcome of samples that left the buffer from the .eval log.
func (w *Watcher) scoreFlushed(s *evalSource) {
	if s.logPath != "" {
		if st, err := os.Stat(s.logPath); err == nil {
			s.scoreMod = st.ModTime()
		}
	}
	for i := range s.samples {
		st := &s.samples[i]
		if st.Status != buffer.StatusFlushed && st.Status != buffer.StatusEnded {
			continue
		}
		k := buffer.Key{ID: st.ID, Epoch: st.Epoch}
		if _, ok := s.flushed[k]; ok || s.logPath == "" {
			continue
		}
		r, err := evallog.ReadSample(s.logPath, st.ID, st.Epoch)
		if err != nil {
			if !errors.Is(err, evallog.ErrNoSample) {
				s.logProbl = err.Error()
			}
			continue
		}
		s.flushed[k] = r
	}
}

// Version counts published snapshots; it moves whenever anything a reader sees changed.
func (w *Watcher) Version() uint64 { return w.snap.Load().version }

// Changed returns a channel closed at the next published change; call it again after.
func (w *Watcher) Changed() <-chan struct{} {
	w.notifyMu.Lock()
	defer w.notifyMu.Unlock()
	return w.notify
}

// Evals is every running (or recently ended) eval with its samples.
func (w *Watcher) Evals() []Eval { return w.snap.Load().evals }

// Problems are discovery problems not tied to one eval (unreadable control or trace files).
func (w *Watcher) Problems() []string { return w.snap.Load().problems }

// Link ties a sandbox to its eval and sample. execs are commands seen running in the sandbox
// (e.g. from docker exec events), used to confirm a trace or guessed link.
func (w *Watcher) Link(sb sandbox.Sandbox, execs ...string) Link {
	return w.snap.Load().link(sb, execs)
}

// Sample is one sample's state.
func (w *Watcher) Sample(key EvalKey, id string, epoch int) (SampleState, bool) {
	sn := w.snap.Load()
	i, ok := sn.byKey[key]
	if !ok {
		return SampleState{}, false
	}
	for _, s := range sn.evals[i].Samples {
		if s.ID == id && s.Epoch == epoch {
			return s, true
		}
	}
	return SampleState{}, false
}

// Commands is the agent's sandbox commands for the timeline, oldest first, the in-flight tool
// call (Pending) last.
func (w *Watcher) Commands(key EvalKey, id string, epoch int) []Command {
	s, ok := w.Sample(key, id, epoch)
	if !ok {
		return nil
	}
	out := append([]Command(nil), s.Commands...)
	if s.Pending != nil {
		out = append(out, *s.Pending)
	}
	return out
}

func (w *Watcher) reader(key EvalKey) (*buffer.Reader, bool) {
	w.srcMu.RLock()
	defer w.srcMu.RUnlock()
	s, ok := w.evals[key]
	if !ok {
		return nil, false
	}
	return s.rd, true
}

// Output is one command's output (by Command.Seq), returned only on demand.
func (w *Watcher) Output(key EvalKey, id string, epoch int, seq int64) (string, bool) {
	rd, ok := w.reader(key)
	if !ok {
		return "", false
	}
	return rd.Output(buffer.Key{ID: id, Epoch: epoch}, seq)
}

// Resolve expands an attachment://<hash> reference (a long pending tool call's cmd) from the
// sample's buffer, on demand; other strings come back unchanged.
func (w *Watcher) Resolve(ctx context.Context, key EvalKey, id string, epoch int, s string) (string, error) {
	rd, ok := w.reader(key)
	if !ok {
		return s, errors.New("eval " + string(key) + " is not watched")
	}
	return rd.Resolve(ctx, buffer.Key{ID: id, Epoch: epoch}, s)
}

// publish builds the next snapshot from the sources.
func (w *Watcher) publish(now time.Time) {
	w.srcMu.RLock()
	prev := w.snap.Load()
	sn := &snapshot{version: prev.version + 1, byKey: map[EvalKey]int{}, byUUID: map[string]sampleRef{},
		projects: map[string]tracedProject{}, alive: map[int]bool{}, problems: append([]string(nil), w.problems...)}
	for k, s := range w.evals {
		sn.evals = append(sn.evals, w.evalOf(k, s))
		sn.alive[s.file.PID] = s.alive
	}
	latest := map[string]tracedProject{} // pid/task/sample/epoch → newest project
	for _, t := range w.traces {
		sn.alive[t.file.PID] = t.alive
		for _, p := range t.rd.Projects() {
			tp := tracedProject{Project: p, PID: t.file.PID, TracePath: t.file.Path}
			sn.projects[p.Project] = tp
			id := sampleIdentity(tp)
			if old, ok := latest[id]; !ok || p.Time.After(old.Time) {
				latest[id] = tp
			}
		}
	}
	w.srcMu.RUnlock()
	for name, tp := range sn.projects {
		if latest[sampleIdentity(tp)].Project.Project != name {
			tp.Superseded = true
			sn.projects[name] = tp
		}
	}
	sort.Slice(sn.evals, func(i, j int) bool {
		if !sn.evals[i].Created.Equal(sn.evals[j].Created) {
			return sn.evals[i].Created.Before(sn.evals[j].Created)
		}
		return sn.evals[i].Key < sn.evals[j].Key
	})
	for i := range sn.evals {
		e := &sn.evals[i]
		sn.byKey[e.Key] = i
		for j := range e.Samples {
			if u := e.Samples[j].UUID; u != "" {
				sn.byUUID[u] = sampleRef{e, &e.Samples[j]}
			}
		}
	}
	w.snap.Store(sn)
	w.notifyMu.Lock()
	close(w.notify)
	w.notify = make(chan struct{})
	w.notifyMu.Unlock()
}

func sampleIdentity(tp tracedProject) string {
	return itoa(tp.PID) + "\x00" + tp.Task + "\x00" + tp.SampleID + "\x00" + itoa(tp.Epoch)
}

// evalOf is the published view of one source.
func (w *Watcher) evalOf(k EvalKey, s *evalSource) Eval {
	e := Eval{Key: k, DataDir: s.file.DataDir, PID: s.file.PID, Alive: s.alive, Ended: s.rd.Ended(), EndedAt: s.endedAt,
		Stale: s.stale, BufferPath: s.file.Path, LogPath: s.logPath, Task: taskFromLogBase(s.file.LogBase)}
	if s.startOK {
		st := s.start
		e.Task, e.TaskID, e.Model, e.EvalID, e.RunID, e.Created = st.Task, st.TaskID, st.Model, st.EvalID, st.RunID, st.Created
	}
	if c, ok := w.controls[s.file.PID]; ok {
		e.Control = c.Path
		if e.RunID == "" {
			e.RunID = c.RunID
		}
	}
	for _, t := range w.traces {
		if t.file.PID == s.file.PID {
			e.TracePath = t.file.Path
		}
	}
	for _, p := range []string{s.problem, s.logProbl} {
		if p != "" {
			e.Problems = append(e.Problems, p)
		}
	}
	e.Samples = make([]SampleState, len(s.samples))
	copy(e.Samples, s.samples)
	for i := range e.Samples {
		st := &e.Samples[i]
		if st.Status != buffer.StatusFlushed && st.Status != buffer.StatusEnded {
			continue
		}
		if r, ok := s.flushed[buffer.Key{ID: st.ID, Epoch: st.Epoch}]; ok {
			if sc := r.Score(); sc != "" {
				st.Score = sc
			}
			if r.Error != "" {
				st.Error = r.Error
			}
			st.ScoreNote = "from " + s.logPath
		} else if st.Score == "" {
			st.ScoreNote = "score unknown: the sample is not in a .eval log found in the log dirs"
		}
	}
	return e
}

// snapshot is one immutable published view; the linker reads only this.
type snapshot struct {
	version  uint64
	evals    []Eval
	byKey    map[EvalKey]int
	byUUID   map[string]sampleRef
	projects map[string]tracedProject
	alive    map[int]bool
	problems []string
}
