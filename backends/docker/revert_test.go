package docker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

func TestCancelledRevertSaysWhereItStoppedAndASecondRevertFinishes(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-cancel-" + dockertest.RunID
	id := b.SandboxID(project)
	withStore(t, b, id)
	twoTierProject(t, project)

	sh(t, b, id, "a", writeOriginals)
	info, err := b.Snapshot(context.Background(), id, backends.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sh(t, b, id, "a", changeBoth)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	revertStep = func(_ context.Context, step string) {
		if step == "created "+project+"-b-1" {
			cancel()
		}
	}
	t.Cleanup(func() { revertStep = func(context.Context, string) {} })
	err = b.Revert(ctx, id, info.ID, backends.RevertOptions{})
	if err == nil {
		t.Fatal("cancelled revert returned no error")
	}
	t.Logf("interrupted revert: %v", err)
	for _, want := range []string{"interrupted", "partially restored", "created: " + project + "-b-1", "started: none", "or the revert again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error does not wrap context.Canceled: %v", err)
	}
	revertStep = func(context.Context, string) {}

	if err := b.Revert(context.Background(), id, info.ID, backends.RevertOptions{}); err != nil {
		t.Fatalf("second revert: %v", err)
	}
	if got := sh(t, b, id, "a", readBack); got != wantOriginals {
		t.Fatalf("after second revert: %q, want %q", got, wantOriginals)
	}
	if got := sh(t, b, id, "a", "wget -q -O- http://b:8080/"); got != "hi-from-b" {
		t.Fatalf("after second revert a→b: %q", got)
	}
	cs, err := b.members(context.Background(), project)
	if err != nil || len(cs) != 2 {
		t.Fatalf("members after second revert: %d (%v), want exactly 2", len(cs), err)
	}
}

func TestRevertRefusals(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-refuse-" + dockertest.RunID
	id := b.SandboxID(project)
	withStore(t, b, id)
	ctx := context.Background()
	// The error names the missing thing: the snapshot, not the (existing) sandbox.
	if err := b.Revert(ctx, id, "s-missing", backends.RevertOptions{}); !errors.Is(err, backends.ErrSnapshotNotFound) ||
		errors.Is(err, backends.ErrNotFound) || !strings.Contains(err.Error(), `"s-missing"`) {
		t.Errorf("unknown snapshot: %v, want ErrSnapshotNotFound naming it", err)
	}
	if err := b.Revert(ctx, b.Name()+"/container:web", "s1", backends.RevertOptions{}); !errors.Is(err, backends.ErrNotSandbox) {
		t.Errorf("plain container: %v, want ErrNotSandbox", err)
	}
	nb := newTestBackend(t, Options{})
	if _, err := nb.Snapshot(ctx, id, backends.SnapshotOptions{}); err == nil || !strings.Contains(err.Error(), "snapshot store") {
		t.Errorf("snapshot without store: %v", err)
	}
}

func TestRevertKeepsStaticAddressesAliasesAndAnonymousVolumes(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := b.Client()
	ctx := context.Background()
	project := "rk-static-" + dockertest.RunID
	id := b.SandboxID(project)
	withStore(t, b, id)
	// A project network with its own address plan, on a local bridge only this test uses.
	third := int(dockertest.RunID[0])%200 + 20
	subnet := fmt.Sprintf("10.251.%d.0/24", third)
	static := fmt.Sprintf("10.251.%d.10", third)
	netName := project + "_ranged"
	if _, err := cli.NetworkCreate(ctx, netName, client.NetworkCreateOptions{Driver: "bridge", Internal: true,
		IPAM:   &network.IPAM{Config: []network.IPAMConfig{{Subnet: netip.MustParsePrefix(subnet)}}},
		Labels: dockertest.Labels(map[string]string{LabelProject: project, LabelNetwork: "ranged"})}); err != nil {
		t.Fatal(err)
	}
	dockertest.Project(t, project)
	cid := dockertest.StartService(t, project, "", dockertest.Image(t), dockertest.Service{Name: "target",
		HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode(netName),
			Mounts: []mount.Mount{{Type: mount.TypeVolume, Target: "/anon"}}}}) // an anonymous volume
	// StartService joins no endpoint config for a foreign network mode: reconnect with a static address.
	if _, err := cli.NetworkDisconnect(ctx, netName, client.NetworkDisconnectOptions{Container: cid, Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.NetworkConnect(ctx, netName, client.NetworkConnectOptions{Container: cid, EndpointConfig: &network.EndpointSettings{
		Aliases: []string{"target", "flag-server"}, IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: netip.MustParseAddr(static)}}}); err != nil {
		t.Fatal(err)
	}
	sh(t, b, id, "target", "echo anon-original > /anon/f")
	snap, err := b.Snapshot(ctx, id, backends.SnapshotOptions{NoPause: true})
	if err != nil {
		t.Fatal(err)
	}
	sh(t, b, id, "target", "echo anon-changed > /anon/f")
	removeMembersAndNetworks(t, b, project)
	if err := b.Revert(ctx, id, snap.ID, backends.RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, b, id, "target", "cat /anon/f"); got != "anon-original" {
		t.Errorf("anonymous volume after revert: %q", got)
	}
	m, err := b.member(ctx, id, "target")
	if err != nil {
		t.Fatal(err)
	}
	ins, err := cli.ContainerInspect(ctx, m.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep := ins.Container.NetworkSettings.Networks[netName]
	if ep == nil || ep.IPAddress.String() != static {
		t.Fatalf("endpoint after revert %+v, want %s", ep, static)
	}
	if !slices.Contains(ep.Aliases, "flag-server") || !slices.Contains(ep.Aliases, "target") {
		t.Errorf("aliases after revert %v", ep.Aliases)
	}
	n, err := cli.NetworkInspect(ctx, netName, client.NetworkInspectOptions{})
	if err != nil || !n.Network.Internal || len(n.Network.IPAM.Config) == 0 || n.Network.IPAM.Config[0].Subnet.String() != subnet {
		t.Errorf("recreated network: %v internal=%v ipam=%+v", err, n.Network.Internal, n.Network.IPAM.Config)
	}
}
