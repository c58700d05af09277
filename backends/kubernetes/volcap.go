package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Whether snapshot and revert are available: the cluster must serve the VolumeSnapshot API and
// have a VolumeSnapshotClass, and the release must have PVCs.

// snapCap caches whether the cluster can take CSI snapshots at all. Unsupported is called by
// the UI without a context, so it must not block on the API server: Watch fills the cache,
// a stale answer is refreshed in the background, and only the very first call (nothing cached
// yet) checks synchronously with a short timeout.
type snapCap struct {
	mu         sync.Mutex
	known      bool
	reason     string // "" when the API is served and at least one class exists
	at         time.Time
	refreshing bool
}

func (b *Backend) snapCap() *snapCap { return &b.snap }

// checkSnapshotAPI asks discovery whether VolumeSnapshots are served and lists at most one
// VolumeSnapshotClass; it returns "" when snapshots are possible, else the reason.
func (b *Backend) checkSnapshotAPI(ctx context.Context) string {
	// Raw discovery rather than ServerResourcesForGroupVersion, which takes no context: the
	// answer must come within ctx's timeout even from a blackholed API server.
	raw, err := b.cs.Discovery().RESTClient().Get().AbsPath("/apis/" + volumeSnapshotGVR.GroupVersion().String()).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return "the cluster does not serve snapshot.storage.k8s.io/v1 (no CSI snapshot CRDs installed)"
	}
	if err != nil {
		return fmt.Sprintf("cannot tell whether the cluster serves VolumeSnapshots: %v", err)
	}
	var res metav1.APIResourceList
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Sprintf("cannot read the snapshot.storage.k8s.io/v1 discovery document: %v", err)
	}
	served := map[string]bool{}
	for _, r := range res.APIResources {
		served[r.Name] = true
	}
	if !served[volumeSnapshotGVR.Resource] || !served[volumeSnapshotClassGVR.Resource] {
		return "the cluster does not serve VolumeSnapshots and VolumeSnapshotClasses in snapshot.storage.k8s.io/v1"
	}
	list, err := b.dyn.Resource(volumeSnapshotClassGVR).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsForbidden(err) {
		return "RBAC forbids listing volumesnapshotclasses (grant \"list\" on volumesnapshotclasses.snapshot.storage.k8s.io)"
	}
	if err != nil {
		return fmt.Sprintf("list VolumeSnapshotClasses: %v", err)
	}
	if len(list.Items) == 0 {
		return "no VolumeSnapshotClass in the cluster"
	}
	return ""
}

// refreshSnapshotCapability recomputes the cached capability (Watch calls it at start).
func (b *Backend) refreshSnapshotCapability(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	why := b.checkSnapshotAPI(ctx)
	c := b.snapCap()
	c.mu.Lock()
	c.known, c.reason, c.at = true, why, time.Now()
	c.mu.Unlock()
	return why
}

// snapshotUnsupported is the cluster-level reason (without the action prefix), "" if possible.
func (b *Backend) snapshotUnsupported() string {
	c := b.snapCap()
	c.mu.Lock()
	known, why, stale := c.known, c.reason, time.Since(c.at) > snapCapTTL
	if known && stale && !c.refreshing {
		c.refreshing = true
		go func() {
			b.refreshSnapshotCapability(context.Background())
			c.mu.Lock()
			c.refreshing = false
			c.mu.Unlock()
		}()
	}
	c.mu.Unlock()
	if !known {
		why = b.refreshSnapshotCapability(context.Background())
	}
	return why
}

// UnsupportedFor is Unsupported for one release: besides the cluster-level checks, a release
// without PersistentVolumeClaims has nothing to snapshot. (backends.Explainer has no sandbox
// argument, so callers that know the sandbox should prefer this.)
func (b *Backend) UnsupportedFor(ctx context.Context, sandboxID string, a backends.Action) string {
	if a != backends.ActionSnapshot && a != backends.ActionRevert {
		return b.Unsupported(a)
	}
	// A context is at hand, so the cluster-level answer is refreshed rather than read from cache.
	if why := b.refreshSnapshotCapability(ctx); why != "" {
		return string(a) + ": " + why + " — reset available"
	}
	ns, rel, err := b.parseID(sandboxID)
	if err != nil {
		return string(a) + ": " + err.Error()
	}
	pvcs, err := b.releasePVCs(ctx, ns, rel)
	if err != nil {
		return string(a) + ": " + err.Error()
	}
	if len(pvcs) == 0 {
		return string(a) + ": release has no PersistentVolumeClaims — reset available"
	}
	return ""
}
