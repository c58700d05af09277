package app

import (
	"fmt"
	"path/filepath"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/state"
)

// Layer builds an action layer over r (the supervisor; verify's resolver of the sandboxes it
// stages), acting for who, from LayerOptions.
func (a *App) Layer(r action.Resolver, who action.Identity) (*action.Layer, error) {
	opts, err := a.LayerOptions(who)
	if err != nil {
		return nil, err
	}
	return a.NewLayer(r, opts)
}

// NewLayer builds an action layer over r with opts (LayerOptions plus what the caller adds: the
// team daemon's role checks, admission and notification), journaled to the state file.
func (a *App) NewLayer(r action.Resolver, opts action.Options) (*action.Layer, error) {
	db, err := a.State()
	if err != nil {
		return nil, err
	}
	return action.New(r, db, opts), nil
}

// LayerOptions are the options every action layer of this process starts from.
func (a *App) LayerOptions(who action.Identity) (action.Options, error) {
	cfg, err := a.Config()
	if err != nil {
		return action.Options{}, err
	}
	db, err := a.State()
	if err != nil {
		return action.Options{}, err
	}
	opts := action.Options{ReadOnly: a.ReadOnly(), Identity: who}
	// Only stat'ed here: the binary (megabytes) is read at the first probe (prober.go).
	if path, err := probe.Locate(); err == nil {
		targets := probe.TargetsFrom(cfg.Probe)
		opts.Prober = &lazyProber{path: path, make: func(bin []byte) *probe.Pipeline {
			return &probe.Pipeline{Binary: bin, Targets: targets, History: db}
		}}
	} else {
		opts.NoProbe = err.Error()
	}
	return opts, nil
}

// snapshotStore hands backends the state file as their snapshot store, opened only when a
// snapshot is first touched (so `ls` never locks the state file).
func (a *App) snapshotStore() backends.SnapshotStore { return lazyStore{a} }

type lazyStore struct{ a *App }

func (l lazyStore) db() (*state.DB, error) {
	db, err := l.a.State()
	if err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	return db, nil
}

func (l lazyStore) PutSnapshot(rec backends.SnapshotRecord) error {
	db, err := l.db()
	if err != nil {
		return err
	}
	return db.PutSnapshot(rec)
}

func (l lazyStore) Snapshot(sandboxID, snapshotID string) (backends.SnapshotRecord, bool, error) {
	db, err := l.db()
	if err != nil {
		return backends.SnapshotRecord{}, false, err
	}
	return db.Snapshot(sandboxID, snapshotID)
}

func (l lazyStore) Snapshots(sandboxID string) ([]backends.SnapshotRecord, error) {
	db, err := l.db()
	if err != nil {
		return nil, err
	}
	return db.Snapshots(sandboxID)
}

func (l lazyStore) DeleteSnapshot(sandboxID, snapshotID string) error {
	db, err := l.db()
	if err != nil {
		return err
	}
	return db.DeleteSnapshot(sandboxID, snapshotID)
}

// StoreID names the state file on the snapshot images its records own (see docker.LabelSnapshotStore).
func (l lazyStore) StoreID() string {
	if abs, err := filepath.Abs(l.a.StatePath()); err == nil {
		return abs
	}
	return l.a.StatePath()
}

func (l lazyStore) ArchiveDir(snapshotID string) string {
	return filepath.Join(filepath.Dir(l.a.StatePath()), "snapshots", snapshotID)
}
