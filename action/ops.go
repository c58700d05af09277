package action

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/rangekeeper/rangekeeper/backends"
)

// Snapshot takes a snapshot of a sandbox.
func (l *Layer) Snapshot(ctx context.Context, id string, opts backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	var info backends.SnapshotInfo
	err := l.Run(ctx, Request{Action: backends.ActionSnapshot, SandboxID: id, Params: map[string]string{"name": opts.Name, "pause": strconv.FormatBool(!opts.NoPause)}},
		func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
			var err error
			info, err = b.(backends.Snapshotter).Snapshot(ctx, id, opts)
			return err
		})
	return info, err
}

// Snapshots lists a sandbox's snapshots (read-only; not journaled).
func (l *Layer) Snapshots(ctx context.Context, id string) ([]backends.SnapshotInfo, error) {
	b, _, ok := l.resolver.Lookup(id)
	if !ok {
		return nil, fmt.Errorf("%s: %w", id, backends.ErrNotFound)
	}
	s, ok := b.(backends.Snapshotter)
	if !ok {
		_, why := backends.Supports(b, backends.ActionSnapshot)
		return nil, fmt.Errorf("%s: %w", why, ErrUnsupported)
	}
	return s.Snapshots(ctx, id)
}

// DeleteSnapshot removes one snapshot; journaled, refused in read-only mode.
func (l *Layer) DeleteSnapshot(ctx context.Context, id, snapshotID string) error {
	return l.Run(ctx, Request{Action: backends.ActionSnapshot, SandboxID: id, Params: map[string]string{"delete": snapshotID}},
		func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
			return b.(backends.Snapshotter).DeleteSnapshot(ctx, id, snapshotID)
		})
}

// Revert restores a sandbox to a snapshot. confirmed must come from an operator's explicit answer.
func (l *Layer) Revert(ctx context.Context, id, snapshotID string, opts backends.RevertOptions, confirmed bool) error {
	return l.Run(ctx, Request{Action: backends.ActionRevert, SandboxID: id, Confirmed: confirmed, Params: map[string]string{"snapshot": snapshotID}},
		func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
			return b.(backends.Reverter).Revert(ctx, id, snapshotID, opts)
		})
}

// Teardown removes a sandbox.
func (l *Layer) Teardown(ctx context.Context, id string, opts backends.TeardownOptions, confirmed bool) error {
	return l.Run(ctx, Request{Action: backends.ActionTeardown, SandboxID: id, Confirmed: confirmed, Force: opts.Force,
		Params: map[string]string{"keep_snapshots": strconv.FormatBool(opts.KeepSnapshots), "force": strconv.FormatBool(opts.Force)}},
		func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
			return b.(backends.TearDowner).Teardown(ctx, id, opts)
		})
}

// TeardownMany tears sandboxes down with at most parallel at once; errs[i] belongs to ids[i].
func (l *Layer) TeardownMany(ctx context.Context, ids []string, opts backends.TeardownOptions, confirmed bool, parallel int) []error {
	if parallel < 1 {
		parallel = 4
	}
	errs := make([]error, len(ids))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = l.Teardown(ctx, id, opts, confirmed)
		}()
	}
	wg.Wait()
	return errs
}

// Reset recreates a sandbox's members fresh (Kubernetes).
func (l *Layer) Reset(ctx context.Context, id string, confirmed bool) error {
	return l.Run(ctx, Request{Action: backends.ActionReset, SandboxID: id, Confirmed: confirmed},
		func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
			return b.(backends.Resetter).Reset(ctx, id)
		})
}

// Exec runs a command in a sandbox member. Exec can change a sandbox, so it is journaled and
// refused in read-only mode; the command line is journaled, stdin is not.
func (l *Layer) Exec(ctx context.Context, id string, req backends.ExecRequest) (backends.ExecResult, error) {
	var res backends.ExecResult
	err := l.Run(ctx, Request{Action: backends.ActionExec, SandboxID: id, Params: map[string]string{"member": req.Member, "cmd": fmt.Sprint(req.Cmd)}},
		func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
			var err error
			res, err = b.(backends.Executor).Exec(ctx, id, req)
			return err
		})
	return res, err
}
