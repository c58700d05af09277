package action

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/state"
)

// Orphan is a stored snapshot whose sandbox no longer exists (removed outside rangekeeper:
// compose down, Inspect's cleanup): its images, archives and record stay until pruned.
type Orphan struct {
	backends.SnapshotInfo
	Backend string `json:"backend"`
	// Bytes is what pruning frees: the volume archives plus the images, where the backend can tell.
	Bytes int64 `json:"bytes"`
}

// SnapshotSizer is implemented by backends that can tell how much a snapshot's images take.
type SnapshotSizer interface {
	SnapshotImageBytes(ctx context.Context, snapshotID string) (int64, error)
}

// OrphanSnapshots lists the snapshots of sandboxes missing from the fleet, oldest first. Only
// backends reachable says are connected are judged: a sandbox on an unreachable backend is not
// gone, only unseen.
func (l *Layer) OrphanSnapshots(ctx context.Context, reachable func(backend string) bool) ([]Orphan, error) {
	store, ok := l.journal.(interface {
		Snapshots(sandboxID string) ([]state.SnapshotRecord, error)
	})
	if !ok {
		return nil, nil
	}
	recs, err := store.Snapshots("")
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, sb := range l.resolver.Fleet() {
		live[sb.ID] = true
	}
	var out []Orphan
	for _, r := range recs {
		if live[r.Info.SandboxID] || !reachable(r.Backend) {
			continue
		}
		o := Orphan{SnapshotInfo: r.Info, Backend: r.Backend, Bytes: r.Info.Size}
		if sz, ok := l.backendNamed(r.Backend).(SnapshotSizer); ok {
			if n, err := sz.SnapshotImageBytes(ctx, r.Info.ID); err == nil {
				o.Bytes += n
			}
		}
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// PruneOrphans deletes every orphaned snapshot older than olderThan (0: all), each as a
// journaled snapshot deletion (refused in read-only mode; the caller confirmed). It returns
// what it deleted and the errors of the rest.
func (l *Layer) PruneOrphans(ctx context.Context, req Request, orphans []Orphan, olderThan time.Duration, now time.Time) ([]Orphan, error) {
	var done []Orphan
	var errs []error
	for _, o := range orphans {
		if olderThan > 0 && now.Sub(o.Created) < olderThan {
			continue
		}
		r := req
		r.SandboxID = o.SandboxID
		if _, err := l.DeleteSnapshot(ctx, r, o.ID); err != nil {
			errs = append(errs, fmt.Errorf("%s of %s: %w", o.ID, o.SandboxID, err))
			continue
		}
		done = append(done, o)
	}
	if len(errs) > 0 {
		return done, fmt.Errorf("%d of %d not pruned: %w", len(errs), len(errs)+len(done), errors.Join(errs...))
	}
	return done, nil
}
