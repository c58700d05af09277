package docker

import (
	"context"
	"strings"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.HostVersioner = (*Backend)(nil)

// HostVersions implements backends.HostVersioner: the engine's version and its runc component,
// which a container cannot see from inside.
func (b *Backend) HostVersions(ctx context.Context) (backends.HostVersions, error) {
	v, err := b.cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return backends.HostVersions{}, b.wrap(err)
	}
	out := backends.HostVersions{Engine: v.Version}
	for _, c := range v.Components {
		if strings.EqualFold(c.Name, "runc") {
			out.Runc = c.Version
		}
	}
	return out, nil
}
