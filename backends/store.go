package backends

import (
	"context"
	"errors"
)

// ErrSnapshotNotFound is returned when a snapshot ID or name names no snapshot of the sandbox.
var ErrSnapshotNotFound = errors.New("snapshot not found")

// SnapshotStore keeps the records a backend needs to restore its snapshots (the recipe beside
// the images). Backends that keep such records are given one at construction; *state.DB is the
// one rangekeeper uses.
type SnapshotStore interface {
	PutSnapshot(rec SnapshotRecord) error
	Snapshot(sandboxID, snapshotID string) (SnapshotRecord, bool, error)
	Snapshots(sandboxID string) ([]SnapshotRecord, error) // oldest first; "" lists every sandbox's
	DeleteSnapshot(sandboxID, snapshotID string) error
	// ArchiveDir is the directory for a snapshot's large blobs (volume archives), kept out of
	// the records because their size is unbounded.
	ArchiveDir(snapshotID string) string
}

// HostVersions are versions of the host's runtime that a sandbox cannot see from inside.
type HostVersions struct {
	Engine string // container engine (Docker Engine version)
	Runc   string // OCI runtime
	Kernel string // host kernel release, when the backend knows it better than the guest
}

// HostVersioner is implemented by backends that can name their host's runtime versions; the
// escape probe's verdicts use them (runc CVEs, kernel classes).
type HostVersioner interface {
	HostVersions(ctx context.Context) (HostVersions, error)
}
