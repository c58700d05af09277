package backends

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// Action names an operation a backend may support on a sandbox.
type Action string

const (
	ActionSnapshot       Action = "snapshot"
	ActionDeleteSnapshot Action = "snapshot-rm" // delete one stored snapshot and its images
	ActionRevert         Action = "revert"
	ActionTeardown       Action = "teardown"
	ActionExec           Action = "exec"
	ActionCopy           Action = "copy"
	ActionReset          Action = "reset"   // recreate members fresh from their images (Kubernetes)
	ActionProbe          Action = "probe"   // needs exec + copy
	ActionRecover        Action = "recover" // finish or roll back an interrupted action from its write-ahead record
	// ActionVerify stands a spec up, probes it and tears it down (rangekeeper verify): it acts on
	// a spec, not on a sandbox of the fleet, and creates and removes containers on the engine.
	ActionVerify Action = "verify"
)

// ActionShell opens an interactive shell in a member: mutating (the operator can change
// anything), journaled start and end, never the keystrokes.
const ActionShell Action = "shell"

// Spec returns an action kind's declaration; ok is false for an unknown kind.
func (a Action) Spec() (ActionSpec, bool) {
	i, ok := kindIndex[a]
	if !ok {
		return ActionSpec{}, false
	}
	return kinds[i], true
}

// Actions lists every declared action kind, sorted by name.
func Actions() []Action {
	out := make([]Action, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Kind)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Destructive reports whether an action loses state and so needs confirmation and journaling,
// and is refused in read-only mode.
func (a Action) Destructive() bool { s, _ := a.Spec(); return s.Destructive }

// NeedsConfirm reports whether the operator must confirm the action first.
func (a Action) NeedsConfirm() bool { s, _ := a.Spec(); return s.Destructive || s.Confirm }

// Mutating reports whether an action can change the sandbox or the host, and so is refused in
// read-only mode.
func (a Action) Mutating() bool { s, _ := a.Spec(); return s.Mutating || s.Destructive }

// SnapshotOptions tunes a snapshot.
type SnapshotOptions struct {
	Name        string // operator-chosen name; the backend generates one when empty
	Description string
	NoPause     bool // Docker: do not pause members while committing (pausing is the default)
	WithMemory  bool // Proxmox: include RAM state (vmstate)
}

// SnapshotInfo describes one stored snapshot of a sandbox; SnapshotRecord is what a SnapshotStore
// keeps of it.
type (
	SnapshotInfo   = sandbox.SnapshotInfo
	SnapshotRecord = sandbox.SnapshotRecord
)

// RevertOptions tunes a revert.
type RevertOptions struct {
	Start bool // Proxmox: start VMs after rollback
}

// TeardownOptions tunes a teardown.
type TeardownOptions struct {
	KeepSnapshots bool // keep snapshot images / records
	Force         bool // act on resources not identified as sandboxes
	Timeout       time.Duration
}

// ExecRequest runs a command in one member of a sandbox.
type ExecRequest struct {
	Member  string // member name, ID or service; empty means the default member (Inspect's "default")
	Cmd     []string
	Stdin   io.Reader
	Env     []string
	User    string
	WorkDir string
	Timeout time.Duration
}

// ExecResult is the outcome of an exec that ran to completion.
type ExecResult struct {
	ExitCode int    `json:"exit_code"`
	Stdout   []byte `json:"-"`
	Stderr   []byte `json:"-"`
	TimedOut bool   `json:"timed_out,omitempty"`
}

// Snapshotter takes, lists and deletes snapshots.
type Snapshotter interface {
	Snapshot(ctx context.Context, sandboxID string, opts SnapshotOptions) (SnapshotInfo, error)
	Snapshots(ctx context.Context, sandboxID string) ([]SnapshotInfo, error)
	DeleteSnapshot(ctx context.Context, sandboxID, snapshotID string) error
}

// Reverter restores a sandbox to a snapshot.
type Reverter interface {
	Revert(ctx context.Context, sandboxID, snapshotID string, opts RevertOptions) error
}

// TearDowner removes a sandbox and the resources it owns.
type TearDowner interface {
	Teardown(ctx context.Context, sandboxID string, opts TeardownOptions) error
}

// Resetter recreates a sandbox's members fresh (Kubernetes' honest alternative to revert).
type Resetter interface {
	Reset(ctx context.Context, sandboxID string) error
}

// Executor runs commands inside a sandbox member.
type Executor interface {
	Exec(ctx context.Context, sandboxID string, req ExecRequest) (ExecResult, error)
}

// Copier moves single files in and out of a sandbox member.
type Copier interface {
	CopyTo(ctx context.Context, sandboxID, member, path string, data []byte, mode int64) error
	CopyFrom(ctx context.Context, sandboxID, member, path string) ([]byte, error)
}

// Explainer lets a backend say why it does not support an action ("" means supported, or
// that the backend has no reason beyond the missing interface).
type Explainer interface {
	Unsupported(a Action) string
}

// Supports reports whether b supports a and, if not, a reason fit to show an operator.
func Supports(b Backend, a Action) (bool, string) {
	if e, ok := b.(Explainer); ok {
		if why := e.Unsupported(a); why != "" {
			return false, why
		}
	}
	spec, known := a.Spec()
	if !known {
		return false, fmt.Sprintf("%s: not an action rangekeeper knows", a)
	}
	for _, n := range spec.Needs {
		if ok, _ := Supports(b, n); !ok {
			return false, fmt.Sprintf("%s: not supported by %s", a, b.Kind())
		}
	}
	if spec.Implemented != nil && !spec.Implemented(b) {
		return false, fmt.Sprintf("%s: not supported by %s", a, b.Kind())
	}
	return true, ""
}
