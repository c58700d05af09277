package dockerstage

import (
	"context"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/verify"
)

// Prober runs today's probe pipeline (probe.RunWith through the Docker backend's exec and copy)
// for verify. It is the stand-in until the action layer's probe plugs into verify.Prober.
func Prober(b *docker.Backend, bin []byte) verify.Prober {
	return verify.ProberFunc(func(ctx context.Context, req verify.ProbeRequest) (probe.Result, error) {
		return probe.RunWith(ctx, b, b, req.SandboxID, req.Member, bin, req.Targets, probe.Options{})
	})
}
