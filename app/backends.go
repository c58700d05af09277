package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes"
	"github.com/rangekeeper/rangekeeper/backends/proxmox"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

// builder turns the config into the backends of one family; a new family is one more entry.
type builder func(a *App, cfg *config.Config) ([]backends.Backend, error)

var builders = []builder{dockerBackends, proxmoxBackends, kubernetesBackends}

func dockerBackends(a *App, cfg *config.Config) ([]backends.Backend, error) {
	eps := cfg.Docker
	if len(eps) == 0 {
		eps = []config.DockerEndpoint{{}} // the environment's engine
	}
	var out []backends.Backend
	for _, e := range eps {
		b, err := docker.New(docker.Endpoint{Name: e.Name, Context: e.Context, Host: e.Host},
			docker.Options{All: a.opts.All, Snapshots: a.snapshotStore(), RuntimePolicy: cfg.Lint.Policy.SandboxedRuntime})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// proxmoxBackends builds one backend per configured endpoint plus Inspect's PROXMOX_* settings.
func proxmoxBackends(a *App, cfg *config.Config) ([]backends.Backend, error) {
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
		a.skipped(err)
	}
	return out, nil
}

// kubernetesBackends builds one backend per configured kubeconfig context (or the in-cluster
// config) when kubernetes.enabled is set. Nothing is contacted here: the watch reports an
// unreachable API server or an RBAC refusal.
func kubernetesBackends(_ *App, cfg *config.Config) ([]backends.Backend, error) {
	if !cfg.Kubernetes.Enabled {
		return nil, nil
	}
	bs, err := kubernetes.New(cfg.Kubernetes, cfg.Lint.Policy.SandboxedRuntime)
	if err != nil {
		return nil, err
	}
	out := make([]backends.Backend, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out, nil
}

func (a *App) skipped(err error) {
	fmt.Fprintln(a.opts.ErrOut, "rangekeeper: backend skipped:", redact.Message(err.Error()))
}

// Backends builds every configured backend once (and the Extra ones), keeping only Options.Only
// when set. It fails only when none could be built.
func (a *App) Backends() ([]backends.Backend, error) {
	a.backendsOnce.Do(func() { a.backends, a.backendsErr = a.buildBackends() })
	return a.backends, a.backendsErr
}

func (a *App) buildBackends() ([]backends.Backend, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	var all []backends.Backend
	var errs []error
	for _, build := range builders {
		bs, err := build(a, cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, bs...)
	}
	all = a.keepOnly(append(all, a.opts.Extra...))
	for _, b := range all {
		if c, ok := b.(backends.Closer); ok {
			a.onClose(func() { c.Close() })
		}
	}
	if len(all) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, err := range errs {
		a.skipped(err)
	}
	return all, nil
}

// keepOnly drops, before anything is supervised, the backends Options.Only does not name (a
// kind such as "docker" or a name such as "docker:default"), closing what they hold: a
// one-backend listing (ls --backend) never waits for, nor reports, the others.
func (a *App) keepOnly(all []backends.Backend) []backends.Backend {
	if a.opts.Only == "" {
		return all
	}
	var kept []backends.Backend
	for _, b := range all {
		if string(b.Kind()) == a.opts.Only || b.Name() == a.opts.Only {
			kept = append(kept, b)
			continue
		}
		if c, ok := b.(backends.Closer); ok {
			c.Close()
		}
	}
	return kept
}

// HoldFirstLists makes the supervisor, when it is built after this call, hold the backends'
// first lists until until closes: the workbench decodes its inventory cache meanwhile, which
// the first lists of a large range would slow down.
func (a *App) HoldFirstLists(until <-chan struct{}) {
	a.mu.Lock()
	a.holdLists = until
	a.mu.Unlock()
}

// Supervisor starts the supervisor once; it runs until Close.
func (a *App) Supervisor() (*supervisor.Supervisor, error) {
	a.mu.Lock()
	sup, err := a.sup, a.supErr
	a.mu.Unlock()
	if sup != nil || err != nil {
		return sup, err
	}
	bs, err := a.Backends()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sup != nil {
		return a.sup, nil
	}
	if err != nil {
		a.supErr = err
		return nil, err
	}
	a.sup = supervisor.New(bs, supervisor.DefaultBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	if a.holdLists == nil {
		wait := a.sup.Start(ctx)
		a.closers = append(a.closers, func() { cancel(); wait() })
		return a.sup, nil
	}
	started := make(chan func(), 1)
	go func(gate <-chan struct{}, s *supervisor.Supervisor) {
		select {
		case <-gate:
			started <- s.Start(ctx)
		case <-ctx.Done(): // closed first: nothing to start or wait for
			started <- func() {}
		}
	}(a.holdLists, a.sup)
	a.closers = append(a.closers, func() { cancel(); (<-started)() })
	return a.sup, nil
}

// ReadySupervisor starts the supervisor and waits (at most wait) for every backend's first
// answer, reporting those that did not answer on ErrOut. One-shot commands use it.
func (a *App) ReadySupervisor(ctx context.Context, wait time.Duration) (*supervisor.Supervisor, error) {
	s, err := a.Supervisor()
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
		fmt.Fprintf(a.opts.ErrOut, "rangekeeper: %s unreachable: %s\n", redact.Cell(h.Backend), redact.Message(why))
	}
	return s, nil
}
