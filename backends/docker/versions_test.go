package docker

import (
	"context"
	"strings"
	"testing"
)

// The host versions the probe's verdicts use are the engine's own, with runc's distribution
// package version when the engine reports one (this machine's Debian engine reports
// "1.1.5+ds1-1+deb12u1"), so a patched distribution build is judged by its distribution's
// advisories instead of raising a false alarm on every sandbox (verdict tests cover the judging).
func TestHostVersionsCarryTheDistributionBuild(t *testing.T) {
	b := newTestBackend(t, Options{})
	ctx := context.Background()
	hv, err := b.HostVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.EngineFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hv.Engine == "" || hv.Engine != f.Version || hv.Runc == "" || hv.Runc != f.ComponentVersion("runc") {
		t.Fatalf("host versions %+v; engine facts %+v", hv, f)
	}
	c := f.Components["runc"]
	if c.GitCommit != "" && strings.Contains(c.GitCommit, c.Version) && hv.Runc != c.GitCommit {
		t.Errorf("runc %q, want the distribution build %q the engine reports", hv.Runc, c.GitCommit)
	}
}
