package docker

import (
	"context"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.HostVersioner = (*Backend)(nil)

// HostVersions implements backends.HostVersioner: the engine's version and its runc component,
// which a container cannot see from inside. runc is its most specific version: a distribution's
// package version (e.g. Debian's "1.1.5+ds1-1+deb12u1") when the engine reports one, so the
// verdict compares against the distribution's fixed builds rather than upstream's.
func (b *Backend) HostVersions(ctx context.Context) (backends.HostVersions, error) {
	f, err := b.EngineFacts(ctx)
	if err != nil {
		return backends.HostVersions{}, err
	}
	return backends.HostVersions{Engine: f.Version, Runc: f.ComponentVersion("runc")}, nil
}
