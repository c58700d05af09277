package action

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/probe"
)

// The typed helpers below fill in req.Action and the journaled parameters; req names the
// sandbox, who asks and whether the operator confirmed.

// Snapshot takes a snapshot of a sandbox.
func (l *Layer) Snapshot(ctx context.Context, req Request, opts backends.SnapshotOptions) (backends.SnapshotInfo, error) {
	req.Action = backends.ActionSnapshot
	var info backends.SnapshotInfo
	if err := CheckName(opts.Name); err != nil {
		return info, err
	}
	req.Params = map[string]string{"name": opts.Name, "pause": strconv.FormatBool(!opts.NoPause)}
	err := l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		var err error
		info, err = b.(backends.Snapshotter).Snapshot(ctx, req.SandboxID, opts)
		return err
	})
	return info, err
}

// ErrBadName refuses a name an operator typed that cannot be shown safely.
var ErrBadName = errors.New("bad name")

// MaxName bounds names operators give (snapshots).
const MaxName = 128

// CheckName refuses names with control or bidi characters (they would rewrite a terminal or fake
// table rows wherever the name is listed) and names longer than MaxName; the name is not echoed.
func CheckName(name string) error {
	if n := utf8.RuneCountInString(name); n > MaxName {
		return fmt.Errorf("%w: %d characters, at most %d", ErrBadName, n, MaxName)
	}
	if !utf8.ValidString(name) || redact.Cell(name) != name {
		return fmt.Errorf("%w: it holds control characters or invalid UTF-8; use printable characters", ErrBadName)
	}
	return nil
}

// Snapshots lists a sandbox's snapshots (read-only; not journaled).
func (l *Layer) Snapshots(ctx context.Context, id string) ([]backends.SnapshotInfo, error) {
	b, _, ok := l.resolver.Lookup(id)
	if !ok {
		// A sandbox gone from the fleet keeps its stored snapshots (orphans): list them too.
		if b = l.backendNamed(backends.BackendOf(id)); b == nil {
			return nil, fmt.Errorf("%s: %w", id, backends.ErrNotFound)
		}
	}
	if ok, why := backends.Supports(b, backends.ActionSnapshot); !ok {
		return nil, fmt.Errorf("%s: %w", why, ErrUnsupported)
	}
	return b.(backends.Snapshotter).Snapshots(ctx, id)
}

// DeleteSnapshot removes one snapshot, named by its ID or unique name: a destructive action of
// its own (confirmed, refused in read-only mode, journaled).
func (l *Layer) DeleteSnapshot(ctx context.Context, req Request, snapshotRef string) (backends.SnapshotInfo, error) {
	return l.onSnapshot(ctx, req, backends.ActionDeleteSnapshot, snapshotRef, func(ctx context.Context, b backends.Backend, snapID string) error {
		return b.(backends.Snapshotter).DeleteSnapshot(ctx, req.SandboxID, snapID)
	})
}

// Revert restores a sandbox to a snapshot named by its ID or unique name; "" is the newest.
func (l *Layer) Revert(ctx context.Context, req Request, snapshotRef string, opts backends.RevertOptions) (backends.SnapshotInfo, error) {
	return l.onSnapshot(ctx, req, backends.ActionRevert, snapshotRef, func(ctx context.Context, b backends.Backend, snapID string) error {
		return b.(backends.Reverter).Revert(ctx, req.SandboxID, snapID, opts)
	})
}

// onSnapshot resolves a snapshot reference (not journaled: a name that names nothing is bad
// input), then runs action a on it with the resolved ID and name journaled.
func (l *Layer) onSnapshot(ctx context.Context, req Request, a backends.Action, ref string,
	fn func(ctx context.Context, b backends.Backend, snapID string) error) (backends.SnapshotInfo, error) {
	snap, err := l.ResolveSnapshot(ctx, req.SandboxID, ref)
	if err != nil {
		return snap, err
	}
	req.Action = a
	req.Params = map[string]string{"snapshot": snap.ID, "name": snap.Name}
	return snap, l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		return fn(ctx, b, snap.ID)
	})
}

// Teardown removes a sandbox.
func (l *Layer) Teardown(ctx context.Context, req Request, opts backends.TeardownOptions) error {
	req.Action = backends.ActionTeardown
	req.Force = opts.Force
	req.Params = map[string]string{"keep_snapshots": strconv.FormatBool(opts.KeepSnapshots), "force": strconv.FormatBool(opts.Force)}
	return l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		return b.(backends.TearDowner).Teardown(ctx, req.SandboxID, opts)
	})
}

// Reset recreates a sandbox's members fresh (Kubernetes).
func (l *Layer) Reset(ctx context.Context, req Request) error {
	req.Action = backends.ActionReset
	return l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		return b.(backends.Resetter).Reset(ctx, req.SandboxID)
	})
}

// Exec runs a command in a sandbox member. Exec can change a sandbox, so it is journaled and
// refused in read-only mode; the command line is journaled, stdin is not.
func (l *Layer) Exec(ctx context.Context, req Request, er backends.ExecRequest) (backends.ExecResult, error) {
	req.Action = backends.ActionExec
	req.Params = map[string]string{"member": er.Member, "cmd": fmt.Sprint(redact.Args(er.Cmd))} // credential-like words redacted
	var res backends.ExecResult
	err := l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		var err error
		res, err = b.(backends.Executor).Exec(ctx, req.SandboxID, er)
		return err
	})
	return res, err
}

// Probe runs the escape probe (Options.Prober) on a sandbox: delivered, run, assessed and kept in
// its history. A sandbox that could not be probed returns its report and an error saying why.
func (l *Layer) Probe(ctx context.Context, req Request, pr probe.Request) (probe.Report, error) {
	req.Action = backends.ActionProbe
	req.Params = map[string]string{"member": pr.Member}
	var rep probe.Report
	err := l.Run(ctx, req, func(ctx context.Context, b backends.Backend, sb backends.Sandbox) error {
		var err error
		rep, err = l.opts.Prober.Probe(ctx, b, sb, pr)
		return err
	})
	if rep.SandboxID == "" {
		rep.SandboxID = req.SandboxID
	}
	return rep, err
}
