// Package app assembles the running rangekeeper process once, from the config and the global
// flags: the backends, their supervisor, the state file, the action layer, the containment
// watch with its hooks, the timeline recorder, the prober and the poller of Inspect's live
// evals. The standalone workbench, the team daemon (`serve`) and every command take the parts
// they need from one App, each built at its first use, so a command that needs no state file
// never opens (or locks) one. Nothing else constructs these parts: a dependency test refuses a
// second assembly.
package app

import (
	"io"
	"sync"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/watch"
)

// Options are the global flags and what a caller adds to the configured fleet.
type Options struct {
	ConfigPath string // "": config.DefaultPath(), absent allowed
	StatePath  string // "": state.DefaultPath()
	ReadOnly   bool   // --read-only: over the config's read_only
	All        bool   // --all: list plain containers too (never actionable)
	// Only keeps the backends of this kind or name (ls --backend); "" keeps all.
	Only string
	// Extra backends join the configured ones (the demo's simulated ranges, tests' fakes).
	Extra []backends.Backend
	// ErrOut receives the warnings of a partial start (a backend skipped).
	ErrOut io.Writer
	// CheckConfig, when set, is asked once the config loads (the workbench's key bindings,
	// which only the program can judge); its error is the config's.
	CheckConfig func(*config.Config) error
}

// App is the process's parts, each built once at its first use and closed by Close.
type App struct {
	opts Options

	cfgOnce sync.Once
	cfg     *config.Config
	cfgErr  error

	dbOnce sync.Once
	db     *state.DB
	dbErr  error

	backendsOnce sync.Once
	backends     []backends.Backend
	backendsErr  error

	mu        sync.Mutex
	sup       *supervisor.Supervisor
	supErr    error
	holdLists <-chan struct{}
	evals     *inspectlive.Watcher
	evalsErr  error
	closers   []func()

	watchMu    sync.Mutex
	watcher    *watch.Watcher
	watcherErr error
}

// New returns an App; nothing is built or opened until asked for.
func New(o Options) *App {
	if o.ErrOut == nil {
		o.ErrOut = io.Discard
	}
	return &App{opts: o}
}

// Config loads the config file once (an explicit path must exist; the default may be absent).
func (a *App) Config() (*config.Config, error) {
	a.cfgOnce.Do(func() {
		path, explicit := a.opts.ConfigPath, a.opts.ConfigPath != ""
		if !explicit {
			path = config.DefaultPath()
		}
		a.cfg, a.cfgErr = config.Load(path, explicit)
		if a.cfg != nil && a.opts.ReadOnly {
			a.cfg.ReadOnly = true
		}
		if a.cfgErr == nil && a.opts.CheckConfig != nil {
			a.cfgErr = a.opts.CheckConfig(a.cfg)
		}
	})
	return a.cfg, a.cfgErr
}

// ReadOnly reports whether every mutation is refused (the flag or the config).
func (a *App) ReadOnly() bool {
	cfg, err := a.Config()
	return a.opts.ReadOnly || err == nil && cfg.ReadOnly
}

// StatePath is the state file's path.
func (a *App) StatePath() string {
	if a.opts.StatePath != "" {
		return a.opts.StatePath
	}
	return state.DefaultPath()
}

// State opens the state file once; Close closes it.
func (a *App) State() (*state.DB, error) {
	a.dbOnce.Do(func() {
		a.db, a.dbErr = state.Open(a.StatePath())
		if a.dbErr == nil {
			a.onClose(func() { a.db.Close() })
		}
	})
	return a.db, a.dbErr
}

func (a *App) onClose(fn func()) {
	a.mu.Lock()
	a.closers = append(a.closers, fn)
	a.mu.Unlock()
}

// Close stops what runs (the watch, the supervisor) and closes what is open, in reverse order
// of building.
func (a *App) Close() {
	a.mu.Lock()
	cs := a.closers
	a.closers = nil
	a.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}
