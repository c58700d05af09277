package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// leftovers counts the containers, networks and volumes labelled with a compose project.
func leftovers(t *testing.T, cli *client.Client, project string) (cs, ns, vs int) {
	t.Helper()
	ctx := context.Background()
	f := make(client.Filters).Add("label", LabelProject+"="+project)
	c, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	n, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	v, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(c.Items), len(n.Items), len(v.Items)
}

// plainContainer starts a container without compose labels (a bystander rangekeeper must not touch).
func plainContainer(t *testing.T, name string) string {
	t.Helper()
	cli := dockertest.Engine(t)
	ctx := context.Background()
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name,
		Config: &container.Config{Image: dockertest.Image(t), Cmd: []string{"sleep", "3600"}, Labels: dockertest.Labels(nil), StopSignal: "SIGKILL"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
	})
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	return res.ID
}

func TestTeardownRemovesOnlyTheProject(t *testing.T) {
	b := newTestBackend(t, Options{All: true})
	cli := b.Client()
	ctx := context.Background()
	project, bystander := "rk-td-"+dockertest.RunID, "rk-td-bystander-"+dockertest.RunID
	id := b.SandboxID(project)
	db := withStore(t, b, id)
	twoTierProject(t, project)
	twoTierProject(t, bystander)
	plain := "rk-td-plain-" + dockertest.RunID
	plainContainer(t, plain)

	snap, err := b.Snapshot(ctx, id, backends.SnapshotOptions{NoPause: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Teardown(ctx, id, backends.TeardownOptions{}); err != nil {
		t.Fatal(err)
	}
	if c, n, v := leftovers(t, cli, project); c+n+v != 0 {
		t.Errorf("left behind: %d containers, %d networks, %d volumes", c, n, v)
	}
	imgs, _ := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", LabelSnapshot+"="+snap.ID)})
	if len(imgs.Items) != 0 {
		t.Errorf("%d snapshot images left", len(imgs.Items))
	}
	if recs, _ := db.Snapshots(id); len(recs) != 0 {
		t.Errorf("%d snapshot records left", len(recs))
	}
	if c, n, v := leftovers(t, cli, bystander); c != 2 || n != 1 || v != 1 {
		t.Errorf("bystander project damaged: %d containers, %d networks, %d volumes", c, n, v)
	}
	if ins, err := cli.ContainerInspect(ctx, plain, client.ContainerInspectOptions{}); err != nil || !ins.Container.State.Running {
		t.Errorf("plain container damaged: %v", err)
	}
	if err := b.Teardown(ctx, id, backends.TeardownOptions{}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("second teardown: %v, want ErrNotFound", err)
	}

	plainID := b.Name() + "/" + plainPrefix + plain
	if err := b.Teardown(ctx, plainID, backends.TeardownOptions{}); !errors.Is(err, backends.ErrNotSandbox) {
		t.Fatalf("plain container without force: %v, want ErrNotSandbox", err)
	}
	if _, err := cli.ContainerInspect(ctx, plain, client.ContainerInspectOptions{}); err != nil {
		t.Fatalf("refused teardown still removed the container: %v", err)
	}
	if err := b.Teardown(ctx, plainID, backends.TeardownOptions{Force: true}); err != nil {
		t.Fatalf("plain container with force: %v", err)
	}
	if _, err := cli.ContainerInspect(ctx, plain, client.ContainerInspectOptions{}); err == nil {
		t.Error("forced teardown left the plain container")
	}
}

// TestParallelTeardownsKeepSnapshotsWhenAsked tears several sandboxes down at once, the way the
// action layer's bounded fan-out calls Teardown.
func TestParallelTeardownsKeepSnapshotsWhenAsked(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := b.Client()
	ctx := context.Background()
	var ids []string
	var projects []string
	for i := range 3 {
		p := fmt.Sprintf("rk-tdm%d-%s", i, dockertest.RunID)
		dockertest.Project(t, p, dockertest.Service{Name: "x"}, dockertest.Service{Name: "y"})
		projects, ids = append(projects, p), append(ids, b.SandboxID(p))
	}
	withStore(t, b, ids[0])
	snap, err := b.Snapshot(ctx, ids[0], backends.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := append(ids, b.SandboxID("rk-never-existed-"+dockertest.RunID))
	var mu sync.Mutex
	fails := map[string]error{}
	_ = parallelLimit(len(all), 2, func(i int) error {
		if err := b.Teardown(ctx, all[i], backends.TeardownOptions{KeepSnapshots: true}); err != nil {
			mu.Lock()
			fails[all[i]] = err
			mu.Unlock()
		}
		return nil
	})
	if len(fails) != 1 || !errors.Is(fails[b.SandboxID("rk-never-existed-"+dockertest.RunID)], backends.ErrNotFound) {
		t.Fatalf("failures %v, want only the unknown sandbox", fails)
	}
	for _, p := range projects {
		if c, n, v := leftovers(t, cli, p); c+n+v != 0 {
			t.Errorf("%s left %d containers, %d networks, %d volumes", p, c, n, v)
		}
	}
	if list, err := b.Snapshots(ctx, ids[0]); err != nil || len(list) != 1 || list[0].ID != snap.ID {
		t.Errorf("KeepSnapshots lost the snapshot: %v, %v", list, err)
	}
	imgs, _ := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", LabelSnapshot+"="+snap.ID)})
	if len(imgs.Items) != 2 {
		t.Errorf("KeepSnapshots kept %d images, want 2", len(imgs.Items))
	}
}
