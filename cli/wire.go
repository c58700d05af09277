package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/proxmox"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/state"
)

// backendBuilder turns the config into backends of one family. Each family registers one, so
// adding a backend never edits this file's callers.
type backendBuilder func(f *factory, cfg *config.Config) ([]backends.Backend, error)

var backendBuilders = []backendBuilder{dockerBackends, proxmoxBackends}

// proxmoxBackends builds one backend per configured endpoint plus Inspect's PROXMOX_* settings.
func proxmoxBackends(f *factory, cfg *config.Config) ([]backends.Backend, error) {
	eps := append([]config.ProxmoxEndpoint(nil), cfg.Proxmox...)
	envs, err := proxmox.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("proxmox (from PROXMOX_* environment): %w", err)
	}
	for _, e := range envs {
		eps = append(eps, e.Endpoint)
	}
	var out []backends.Backend
	var errs []error
	for _, e := range eps {
		b, err := proxmox.New(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("proxmox %s: %w", e.Name, err))
			continue
		}
		out = append(out, b)
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, err := range errs {
		fmt.Fprintln(f.ErrOut, "rangekeeper: backend skipped:", redact.Message(err.Error()))
	}
	return out, nil
}

func dockerBackends(f *factory, cfg *config.Config) ([]backends.Backend, error) {
	eps := cfg.Docker
	if len(eps) == 0 {
		eps = []config.DockerEndpoint{{}} // the environment's engine
	}
	var out []backends.Backend
	for _, e := range eps {
		b, err := docker.New(docker.Endpoint{Name: e.Name, Context: e.Context, Host: e.Host}, docker.Options{All: f.All, Snapshots: f.snapshotStore(), RuntimePolicy: cfg.Lint.Policy.SandboxedRuntime})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Backends builds every configured backend once.
func (f *factory) Backends() ([]backends.Backend, error) {
	if f.backends != nil || f.backendsErr != nil {
		return f.backends, f.backendsErr
	}
	cfg, err := f.Config()
	if err != nil {
		f.backendsErr = err
		return nil, err
	}
	var all []backends.Backend
	var errs []error
	for _, build := range backendBuilders {
		bs, err := build(f, cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, bs...)
	}
	all = append(all, f.extraBackends...)
	all = f.keepOnly(all) // lsstream.go
	for _, b := range all {
		if c, ok := b.(backends.Closer); ok {
			f.onClose(func() { c.Close() })
		}
	}
	if len(all) == 0 && len(errs) > 0 {
		f.backendsErr = errors.Join(errs...)
		return nil, f.backendsErr
	}
	for _, err := range errs {
		fmt.Fprintln(f.ErrOut, "rangekeeper: backend skipped:", redact.Message(err.Error()))
	}
	f.backends = all
	return all, nil
}

// Supervisor starts the supervisor once; it runs until the command ends.
func (f *factory) Supervisor() (*supervisor.Supervisor, error) {
	if f.served != nil {
		return f.served.sup, nil
	}
	if f.sup != nil {
		return f.sup, nil
	}
	bs, err := f.Backends()
	if err != nil {
		return nil, err
	}
	f.sup = supervisor.New(bs, supervisor.DefaultBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	if f.supervisorAfter == nil {
		wait := f.sup.Start(ctx)
		f.onClose(func() { cancel(); wait() })
		return f.sup, nil
	}
	started := make(chan func(), 1)
	go func(gate <-chan struct{}) {
		select {
		case <-gate:
			started <- f.sup.Start(ctx)
		case <-ctx.Done(): // the command ended first: nothing to start or wait for
			started <- func() {}
		}
	}(f.supervisorAfter)
	f.onClose(func() { cancel(); (<-started)() })
	return f.sup, nil
}

// ReadySupervisor starts the supervisor and waits (bounded) for every backend's first answer,
// reporting the ones that did not answer on stderr. One-shot commands use it.
func (f *factory) ReadySupervisor(ctx context.Context, wait time.Duration) (*supervisor.Supervisor, error) {
	s, err := f.Supervisor()
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, h := range s.WaitReady(wctx) {
		why := h.LastError
		if why == "" {
			why = "no answer within " + wait.String()
		}
		fmt.Fprintf(f.ErrOut, "rangekeeper: %s unreachable: %s\n", redact.Cell(h.Backend), redact.Message(why))
	}
	return s, nil
}

// Actions returns the action layer over the supervisor's fleet, journaled to the state file,
// acting for the local operator, with the escape probe when its binary is found.
func (f *factory) Actions(ctx context.Context) (*action.Layer, *supervisor.Supervisor, error) {
	s, err := f.ReadySupervisor(ctx, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	layer, err := f.layer(s)
	if err == nil {
		warnInterrupted(f, layer)
	}
	return layer, s, err
}

// layer builds the action layer over a resolver: the supervisor (the TUI's does not wait for it
// to be ready), or verify's, which knows only the sandboxes verify stages.
func (f *factory) layer(s action.Resolver) (*action.Layer, error) {
	if f.served != nil {
		return f.served.layer, nil
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	db, err := f.State()
	if err != nil {
		return nil, err
	}
	opts := action.Options{ReadOnly: cfg.ReadOnly || f.ReadOnly, Identity: f.Identity()}
	if path, err := probe.Locate(); err == nil { // read at the first probe (lazyprobe.go)
		targets := probe.TargetsFrom(cfg.Probe)
		opts.Prober = &lazyProber{path: path, make: func(bin []byte) *probe.Pipeline {
			return &probe.Pipeline{Binary: bin, Targets: targets, History: db}
		}}
	} else {
		opts.NoProbe = err.Error()
	}
	return action.New(s, db, opts), nil
}

// Identity is who this process acts for: the local user, standalone.
func (f *factory) Identity() action.Identity {
	if f.served != nil {
		return f.served.who
	}
	return action.LocalIdentity()
}

// snapshotStore hands backends the state file as their snapshot store, opened only when a
// snapshot is first touched (so `ls` never locks the state file).
func (f *factory) snapshotStore() backends.SnapshotStore { return lazyStore{f} }

type lazyStore struct{ f *factory }

func (l lazyStore) db() (*state.DB, error) {
	db, err := l.f.State()
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
	if abs, err := filepath.Abs(l.f.statePath()); err == nil {
		return abs
	}
	return l.f.statePath()
}

func (l lazyStore) ArchiveDir(snapshotID string) string {
	return filepath.Join(filepath.Dir(l.f.statePath()), "snapshots", snapshotID)
}
