package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// hardenedWithCanary stands up a sandbox whose agent ("default") sits on an internal network,
// plus a test-owned canary (an httpd) on a separate, non-internal test network the agent is
// connected to with an extra alias and a static address. It returns the sandbox ID, the canary
// network's name and the agent's static address on it.
func hardenedWithCanary(t *testing.T, b *Backend, project string) (id, canaryNet, static string) {
	t.Helper()
	cli := dockertest.Engine(t)
	ctx := context.Background()
	dockertest.Project(t, project)
	inner := project + "_inner"
	if _, err := cli.NetworkCreate(ctx, inner, client.NetworkCreateOptions{Driver: "bridge", Internal: true, Labels: dockertest.Labels(map[string]string{
		LabelProject: project, LabelNetwork: "inner"})}); err != nil {
		t.Fatal(err)
	}
	img := dockertest.Image(t)
	dockertest.StartService(t, project, inner, img, dockertest.Service{Name: "default"})
	// The canary: another project's container on its own network, with a subnet of its own so
	// the agent can be given a static address there.
	canaryNet = project + "-canary"
	h := fnv.New32a()
	h.Write([]byte(dockertest.RunID + project))
	subnet := fmt.Sprintf("10.%d.%d.0/24", 200+h.Sum32()%50, h.Sum32()>>8%250)
	if _, err := cli.NetworkCreate(ctx, canaryNet, client.NetworkCreateOptions{Driver: "bridge", Labels: dockertest.Labels(nil),
		IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: netip.MustParsePrefix(subnet)}}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cli.NetworkRemove(context.Background(), canaryNet, client.NetworkRemoveOptions{}) })
	cproj := project + "-cn"
	dockertest.Project(t, cproj)
	dockertest.StartService(t, cproj, canaryNet, img, dockertest.Service{Name: "canary",
		Cmd: []string{"sh", "-c", "mkdir -p /www && echo canary-ok > /www/index.html && exec httpd -f -p 8080 -h /www"}})
	static = strings.TrimSuffix(subnet, "0/24") + "77"
	if _, err := cli.NetworkConnect(ctx, canaryNet, client.NetworkConnectOptions{Container: project + "-default-1", EndpointConfig: &network.EndpointSettings{
		Aliases: []string{"agent-alias"}, IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: netip.MustParseAddr(static)}}}); err != nil {
		t.Fatal(err)
	}
	return b.SandboxID(project), canaryNet, static
}

const reachCanary = "for i in $(seq 1 30); do timeout 3 wget -q -O- http://canary:8080/ 2>/dev/null && exit 0; sleep 0.2; done; exit 1"

// Quarantine on a sandbox whose agent reaches an egress canary: afterwards the canary is
// unreachable, files written before are intact and the processes still run; release makes the
// canary reachable again, with the agent's aliases and static address on that network as before.
func TestQuarantineCutsEgressKeepsStateReleaseRestoresExactly(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := dockertest.Engine(t)
	ctx := context.Background()
	project := "rk-q-" + dockertest.RunID
	id, canaryNet, static := hardenedWithCanary(t, b, project)
	agent := project + "-default-1"
	if got := sh(t, b, id, "default", reachCanary+"; "); got != "canary-ok" {
		t.Fatalf("before quarantine the canary answered %q", got)
	}
	sh(t, b, id, "default", "echo evidence-1 > /tmp/evidence")
	if _, err := b.Exec(ctx, id, backends.ExecRequest{Member: "default", Cmd: []string{"sh", "-c", "exec sleep 997 </dev/null >/dev/null 2>&1 &"}}); err != nil {
		t.Fatal(err)
	}
	before, err := cli.ContainerInspect(ctx, agent, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	epBefore := before.Container.NetworkSettings.Networks[canaryNet]

	var saved []byte
	if err := b.Quarantine(ctx, id, func(plan []byte) error { saved = plan; return nil }); err != nil {
		t.Fatal(err)
	}
	var plan quarantinePlan
	if err := json.Unmarshal(saved, &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Endpoints) != 1 || plan.Endpoints[0].Network != canaryNet || plan.Endpoints[0].IPv4 != static ||
		!slices.Contains(plan.Endpoints[0].Aliases, "agent-alias") || plan.Endpoints[0].Reason != "not internal" {
		t.Fatalf("plan %s: want exactly the canary endpoint with its alias and static address", saved)
	}
	res, err := b.Exec(ctx, id, backends.ExecRequest{Member: "default", Cmd: []string{"sh", "-c", "timeout 3 wget -q -O- http://canary:8080/ || timeout 3 wget -q -O- http://" + strings.TrimSuffix(static, "77") + "2:8080/"}})
	if err != nil || res.ExitCode == 0 {
		t.Fatalf("quarantined agent still reaches the canary: %q (%v)", res.Stdout, err)
	}
	if got := sh(t, b, id, "default", "cat /tmp/evidence; ps | grep -c '[s]leep 997'"); got != "evidence-1\n1" {
		t.Errorf("after quarantine: files and processes %q, want the evidence file and the sleeper", got)
	}
	during, _ := cli.ContainerInspect(ctx, agent, client.ContainerInspectOptions{})
	if !during.Container.State.Running || during.Container.State.Pid != before.Container.State.Pid {
		t.Errorf("the agent's main process changed: %+v", during.Container.State)
	}
	if _, on := during.Container.NetworkSettings.Networks[project+"_inner"]; !on {
		t.Error("quarantine disconnected the internal sandbox network")
	}

	if err := b.Release(ctx, id, saved); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, b, id, "default", reachCanary); got != "canary-ok" {
		t.Fatalf("after release the canary answered %q", got)
	}
	after, _ := cli.ContainerInspect(ctx, agent, client.ContainerInspectOptions{})
	epAfter := after.Container.NetworkSettings.Networks[canaryNet]
	if epAfter == nil || epAfter.IPAddress != epBefore.IPAddress || epAfter.IPAMConfig == nil || epAfter.IPAMConfig.IPv4Address.String() != static ||
		!slices.Contains(epAfter.Aliases, "agent-alias") {
		t.Fatalf("endpoint after release %+v, before %+v", epAfter, epBefore)
	}
	resolved := sh(t, b, b.SandboxID(project+"-cn"), "canary", "nslookup agent-alias 127.0.0.11 | grep -A2 agent-alias | grep -o '"+static+"' | head -1")
	if resolved != static {
		t.Errorf("agent-alias resolves to %q from the canary's network, want %s as before", resolved, static)
	}
	if got := sh(t, b, id, "default", "cat /tmp/evidence; ps | grep -c '[s]leep 997'"); got != "evidence-1\n1" {
		t.Errorf("after release: %q", got)
	}
}

// A member in the host's network namespace cannot be disconnected: quarantine refuses before
// saving anything rather than claim an isolation it cannot give.
func TestQuarantineRefusesHostNetwork(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-qh-" + dockertest.RunID
	dockertest.Project(t, project)
	img := dockertest.Image(t)
	dockertest.StartService(t, project, "", img, dockertest.Service{Name: "default", HostConfig: hostNet()})
	saved := false
	err := b.Quarantine(context.Background(), b.SandboxID(project), func([]byte) error { saved = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "network mode host") || saved {
		t.Fatalf("quarantine of a host-network sandbox: %v (saved %v)", err, saved)
	}
}

func hostNet() *container.HostConfig { return &container.HostConfig{NetworkMode: "host"} }

// A network the agent shares with a scorer is cut even when it is internal; the scorer itself
// keeps its network (it is not the one to isolate), and release gives the agent its alias back.
func TestQuarantineCutsNetworkSharedWithScorer(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := dockertest.Engine(t)
	ctx := context.Background()
	project := "rk-qs-" + dockertest.RunID
	dockertest.Project(t, project)
	inner := project + "_inner"
	if _, err := cli.NetworkCreate(ctx, inner, client.NetworkCreateOptions{Driver: "bridge", Internal: true, Labels: dockertest.Labels(map[string]string{
		LabelProject: project, LabelNetwork: "inner"})}); err != nil {
		t.Fatal(err)
	}
	img := dockertest.Image(t)
	dockertest.StartService(t, project, inner, img, dockertest.Service{Name: "default"})
	dockertest.StartService(t, project, inner, img, dockertest.Service{Name: "grader", Labels: map[string]string{"x-range.role": "scorer"}})
	id := b.SandboxID(project)
	var saved []byte
	if err := b.Quarantine(ctx, id, func(p []byte) error { saved = p; return nil }); err != nil {
		t.Fatal(err)
	}
	var plan quarantinePlan
	if err := json.Unmarshal(saved, &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Endpoints) != 1 || plan.Endpoints[0].Name != project+"-default-1" || plan.Endpoints[0].Reason != "shared with scorer "+project+"-grader-1" {
		t.Fatalf("plan %s: want only the agent's endpoint on the network shared with the scorer", saved)
	}
	on := func(name string) bool {
		res, err := cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, ok := res.Container.NetworkSettings.Networks[inner]
		return ok
	}
	if on(project+"-default-1") || !on(project+"-grader-1") {
		t.Fatalf("after quarantine: agent on %v, scorer on %v; want the agent cut and the scorer kept", on(project+"-default-1"), on(project+"-grader-1"))
	}
	if err := b.Release(ctx, id, saved); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, b, id, "grader", "nslookup default 127.0.0.11 >/dev/null && echo resolved"); got != "resolved" {
		t.Errorf("the agent's alias does not resolve after release: %q", got)
	}
}
