package docker

import (
	"context"

	"github.com/rangekeeper/rangekeeper/backends"
)

// posture returns the live hardening findings of one member, cached per container ID because a
// container's configuration cannot change after creation.
func (b *Backend) posture(ctx context.Context, containerID, name string) []backends.Finding {
	b.postureMu.Lock()
	f, ok := b.postureCache[containerID]
	b.postureMu.Unlock()
	if ok {
		return f
	}
	f = b.inspectPosture(ctx, containerID, name)
	b.postureMu.Lock()
	b.postureCache[containerID] = f
	b.postureMu.Unlock()
	return f
}

func (b *Backend) forgetPosture(containerID string) {
	b.postureMu.Lock()
	delete(b.postureCache, containerID)
	b.postureMu.Unlock()
}

// inspectPosture is filled in by the live-posture work (issue 3); until then no findings.
func (b *Backend) inspectPosture(ctx context.Context, containerID, name string) []backends.Finding {
	return nil
}
