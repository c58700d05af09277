package cli

import (
	"context"
	"time"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/watch"
)

// Backends builds every configured backend once.
func (f *factory) Backends() ([]backends.Backend, error) { return f.App().Backends() }

// Supervisor starts the supervisor once; it runs until the command ends.
func (f *factory) Supervisor() (*supervisor.Supervisor, error) {
	if f.supervisorAfter != nil && f.served == nil {
		f.App().HoldFirstLists(f.supervisorAfter)
	}
	return f.App().Supervisor()
}

// ReadySupervisor starts the supervisor and waits (bounded) for every backend's first answer,
// reporting the ones that did not answer on stderr. One-shot commands use it.
func (f *factory) ReadySupervisor(ctx context.Context, wait time.Duration) (*supervisor.Supervisor, error) {
	return f.App().ReadySupervisor(ctx, wait)
}

// Actions returns the action layer over the supervisor's fleet, journaled to the state file,
// acting for the operator, with the escape probe when its binary is found.
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

// layer is the action layer over a resolver: the supervisor (the workbench does not wait for it
// to be ready), or verify's, which knows only the sandboxes verify stages. Inside the daemon it
// is the daemon's one layer, with its roles and locks.
func (f *factory) layer(s action.Resolver) (*action.Layer, error) {
	if f.served != nil {
		return f.served.layer, nil
	}
	return f.App().Layer(s, f.Identity())
}

// Identity is who this process acts for: the local user standalone, the client inside the daemon.
func (f *factory) Identity() action.Identity {
	if f.served != nil {
		return f.served.who
	}
	return action.LocalIdentity()
}

// Watcher is the process's containment watch (deferred: the workbench begins it once the cached
// fleet is painted); inside the daemon, the daemon's.
func (f *factory) Watcher() (*watch.Watcher, error) { return f.App().Watcher(true) }
