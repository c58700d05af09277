package dockerstage

import (
	"context"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/verify"
)

// Prober runs today's probe pipeline (probe.RunWith through the Docker backend's exec and copy)
// for verify, with the probe binary from bin (probe.Binary, read on first use). It is the
// stand-in until the action layer's probe plugs into verify.Prober.
func Prober(b *docker.Backend, bin func() ([]byte, error)) verify.Prober {
	return verify.ProberFunc(func(ctx context.Context, req verify.ProbeRequest) (probe.Result, error) {
		data, err := bin()
		if err != nil {
			return probe.Result{}, err
		}
		return probe.RunWith(ctx, b, b, req.SandboxID, req.Member, data, req.Targets, probe.Options{})
	})
}
