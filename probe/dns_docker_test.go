package probe_test

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/probe/facts"
	"github.com/rangekeeper/rangekeeper/probe/verdict"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// TestDNSChannelFromInternalNetwork is the §5.3 pitfall on a real engine: the agent sits on an
// internal network (no route out), yet names resolve through the engine's embedded resolver,
// which forwards to an upstream — here the test's own DNS canary container on the same
// internal network, so no query leaves the test's hosts. E-DNS-02 must flag it.
func TestDNSChannelFromInternalNetwork(t *testing.T) {
	b := dockerBackend(t)
	_, bin := probeBinary(t)
	cli := dockertest.Engine(t)
	ctx := context.Background()

	server := filepath.Join(t.TempDir(), "dnscanary")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-trimpath", "-o", server, "./internal/dnscanary/server")
	build.Dir = filepath.Dir(file)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build dns canary: %v\n%s", err, out)
	}
	srv, err := os.ReadFile(server)
	if err != nil {
		t.Fatal(err)
	}
	img := "rangekeeper-test/dnscanary:" + dockertest.RunID
	if err := dockertest.BuildImage(ctx, cli, img, dockertest.Labels(nil), map[string][]byte{"/dnscanary": srv}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), img, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})

	project := "rkprobe-dns-" + dockertest.RunID
	netName := internalNetwork(t, cli, project)
	dockertest.StartService(t, project, netName, img, dockertest.Service{Name: "dns", Cmd: []string{"/dnscanary", "canary.test"}})
	dnsIP := netip.MustParseAddr(containerIP(t, cli, project+"-dns-1", netName))
	dockertest.StartService(t, project, netName, dockertest.Image(t), dockertest.Service{Name: "default",
		HostConfig: &container.HostConfig{DNS: []netip.Addr{dnsIP}}})

	rep := runProbe(t, b, project, bin, facts.Targets{DNS: []string{"*.canary.test"}, TimeoutMS: 1500})
	n := rep.Result.Facts.Network
	if len(n.Resolvers) == 0 || len(n.DNS) != len(n.Resolvers) {
		t.Fatalf("resolvers %v dns %+v", n.Resolvers, n.DNS)
	}
	t.Logf("resolvers %v, dns %+v", n.Resolvers, n.DNS)
	checkClass(t, rep, expect{"RK-DNS", verdict.Exposed, catalog.SeverityHigh, "E-DNS-02"})
	for _, v := range rep.Verdicts.Classes {
		if v.Class == "RK-DNS" && !strings.Contains(v.Evidence[0].Value, "via ") {
			t.Errorf("evidence does not name the resolver: %+v", v.Evidence)
		}
	}
}
