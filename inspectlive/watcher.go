package inspectlive

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rangekeeper/rangekeeper/inspectlive/buffer"
	"github.com/rangekeeper/rangekeeper/inspectlive/evallog"
	"github.com/rangekeeper/rangekeeper/inspectlive/trace"
)

// Config tunes a Watcher. The zero value watches DefaultDataDirs every second.
type Config struct {
	// DataDirs are Inspect data directories to read (one per eval host mount or user);
	// empty means DefaultDataDirs().
	DataDirs []string
	// ForeignDataDirs are those of DataDirs that belong to another host (a mount): their pids
	// mean nothing here, so their evals count as alive and their sandboxes are never called
	// orphaned on a pid's evidence.
	ForeignDataDirs []string
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
	tried    map[buffer.Key]time.Time // the log's mtime when a flushed sample was last looked for
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
		if a := w.alive(s.file.DataDir, s.file.PID); a != s.alive {
			s.alive, w.dirty = a, true
		}
		w.pollEval(ctx, s, now)
	}
	for path, t := range w.traces {
		if a := w.alive(t.file.DataDir, t.file.PID); a != t.alive {
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

// alive checks a pid where it means something: on this host.
func (w *Watcher) alive(dataDir string, pid int) bool {
	for _, d := range w.cfg.ForeignDataDirs {
		if d == dataDir {
			return true
		}
	}
	return w.cfg.Alive(pid)
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
		s := &evalSource{file: b, rd: buffer.Open(b.Path), flushed: map[buffer.Key]evallog.Sample{},
			tried: map[buffer.Key]time.Time{}, alive: w.alive(b.DataDir, b.PID)}
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
			w.traces[t.Path] = &traceSource{file: t, rd: trace.Open(t.Path), alive: w.alive(t.DataDir, t.PID)}
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
