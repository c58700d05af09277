package docker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

// withStore gives b a fresh state file and removes the sandbox's snapshot images at the end.
func withStore(t *testing.T, b *Backend, sandboxID string) *state.DB {
	t.Helper()
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	b.opts.Snapshots = db // the store a real caller passes to New
	t.Cleanup(func() {
		_ = b.removeImages(context.Background(), make(client.Filters).Add("label", LabelSnapshotSandbox+"="+sandboxID))
		db.Close()
	})
	return db
}

// twoTierProject starts a compose-labelled project: service a (with the named volume
// <project>_data at /data) depends on service b, which serves HTTP on 8080.
func twoTierProject(t *testing.T, project string) {
	t.Helper()
	cli := dockertest.Engine(t)
	if _, err := cli.VolumeCreate(context.Background(), client.VolumeCreateOptions{Name: project + "_data",
		Labels: dockertest.Labels(map[string]string{LabelProject: project, LabelVolume: "data"})}); err != nil {
		t.Fatal(err)
	}
	dockertest.Project(t, project,
		dockertest.Service{Name: "b", Cmd: []string{"sh", "-c", "mkdir -p /www && echo hi-from-b > /www/index.html && exec httpd -f -p 8080 -h /www"}},
		dockertest.Service{Name: "a", DependsOn: "b:service_started:false",
			HostConfig: &container.HostConfig{Binds: []string{project + "_data:/data"}}},
	)
}

// sh runs a shell command in a member and returns its trimmed stdout, failing on a non-zero exit.
func sh(t *testing.T, b *Backend, id, member, script string) string {
	t.Helper()
	res, err := b.Exec(context.Background(), id, backends.ExecRequest{Member: member, Cmd: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("%s: exit %d: %s", script, res.ExitCode, res.Stderr)
	}
	return strings.TrimSpace(string(res.Stdout))
}

const (
	writeOriginals = "echo original > /etc/marker && echo vol-original > /data/v"
	changeBoth     = "echo changed > /etc/marker && echo vol-changed > /data/v && touch /data/added-later"
	readBack       = "cat /etc/marker /data/v; ls /data"
	wantOriginals  = "original\nvol-original\nv"
	// reachB fetches b's page by service name, allowing the engine's embedded DNS and b's httpd up
	// to 10 s to settle after a (re)start: both come up asynchronously after ContainerStart.
	reachB = "for i in $(seq 1 50); do wget -q -O- http://b:8080/ 2>/dev/null && exit 0; sleep 0.2; done; wget -q -O- http://b:8080/"
)

func TestSnapshotAndRevertRestoresFilesNetworksAndCompose(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-snap-" + dockertest.RunID
	id := b.SandboxID(project)
	db := withStore(t, b, id)
	twoTierProject(t, project)
	ctx := context.Background()
	cli := b.Client()

	sh(t, b, id, "a", writeOriginals)
	info, err := b.Snapshot(ctx, id, backends.SnapshotOptions{Name: "before"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "before" || len(info.Members) != 2 || info.Details["volumes"] != "1" {
		t.Fatalf("snapshot info %+v", info)
	}
	// The start order follows depends_on: b before a.
	if !reflect.DeepEqual(info.Members, []string{project + "-b-1", project + "-a-1"}) {
		t.Errorf("start order %v, want b then a", info.Members)
	}
	imgs, err := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", LabelSnapshot+"="+info.ID)})
	if err != nil || len(imgs.Items) != 2 {
		t.Fatalf("snapshot images labelled %s: %d (%v), want 2", info.ID, len(imgs.Items), err)
	}
	// Members are running again (unpaused) after the snapshot.
	if got := sh(t, b, id, "a", reachB); got != "hi-from-b" {
		t.Fatalf("before revert a→b: %q", got)
	}

	sh(t, b, id, "a", changeBoth)
	// Simulate a half-torn-down sandbox: members and the project network gone.
	removeMembersAndNetworks(t, b, project)

	if err := b.Revert(ctx, id, info.ID, backends.RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, b, id, "a", readBack); got != wantOriginals {
		t.Fatalf("after revert: %q, want %q", got, wantOriginals)
	}
	// Revert returns only when every member runs under its service names, so the name resolves
	// at once (reachB's retry loop covers only b's httpd starting up).
	for _, svc := range []string{"a", "b"} {
		m, err := b.member(ctx, id, svc)
		if err != nil {
			t.Fatal(err)
		}
		ins, err := cli.ContainerInspect(ctx, m.ID, client.ContainerInspectOptions{})
		if err != nil || !ins.Container.State.Running || !slices.Contains(ins.Container.NetworkSettings.Networks[project+"_default"].Aliases, svc) {
			t.Fatalf("after revert %s: running=%v aliases=%v (%v)", svc, ins.Container.State.Running, ins.Container.NetworkSettings.Networks[project+"_default"].Aliases, err)
		}
	}
	if got := sh(t, b, id, "a", "nslookup b 127.0.0.11 >/dev/null && echo resolved"); got != "resolved" {
		t.Fatalf("after revert, b does not resolve in a: %q", got)
	}
	if got := sh(t, b, id, "a", reachB); got != "hi-from-b" {
		t.Fatalf("after revert a→b by service name: %q", got)
	}
	n, err := cli.NetworkInspect(ctx, project+"_default", client.NetworkInspectOptions{})
	if err != nil || n.Network.Labels[LabelProject] != project || n.Network.Labels[LabelNetwork] != "default" {
		t.Fatalf("recreated network: %v labels %v", err, n.Network.Labels)
	}
	a, err := b.member(ctx, id, "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{LabelProject, LabelService, LabelNumber, LabelOneoff, LabelDependsOn} {
		if a.Labels[k] == "" && k != LabelDependsOn {
			t.Errorf("compose label %s lost after revert", k)
		}
	}
	composeExec(t, project, "a", "original")

	list, err := b.Snapshots(ctx, id)
	if err != nil || len(list) != 1 || list[0].ID != info.ID {
		t.Fatalf("Snapshots = %v, %v", list, err)
	}
	// The members now run from this snapshot's images, so deleting it must refuse and keep it.
	if err := b.DeleteSnapshot(ctx, id, info.ID); err == nil || !strings.Contains(err.Error(), "still used") {
		t.Fatalf("delete in-use snapshot: %v", err)
	}
	second, err := b.Snapshot(ctx, id, backends.SnapshotOptions{NoPause: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteSnapshot(ctx, id, second.ID); err != nil {
		t.Fatal(err)
	}
	imgs, _ = cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", LabelSnapshot+"="+second.ID)})
	if len(imgs.Items) != 0 {
		t.Errorf("%d images left after DeleteSnapshot", len(imgs.Items))
	}
	if _, err := os.Stat(db.ArchiveDir(second.ID)); !os.IsNotExist(err) {
		t.Errorf("volume archives left after DeleteSnapshot: %v", err)
	}
	if _, ok, _ := db.Snapshot(id, second.ID); ok {
		t.Error("record left after DeleteSnapshot")
	}
}

// composeExec checks that a compose CLI still finds the service by project and service name.
func composeExec(t *testing.T, project, service, want string) {
	t.Helper()
	cmd := dockertest.HaveComposeCLI()
	if cmd == nil {
		if _, err := os.Stat("/usr/bin/docker-compose"); err != nil && os.Getenv("CI") == "true" {
			t.Fatal("no compose CLI in CI")
		}
		t.Log("no compose CLI: compose exec not checked")
		return
	}
	// Compose v1 resolves the service from a compose file, then finds its container by labels.
	file := filepath.Join(t.TempDir(), "docker-compose.yml")
	img := dockertest.Image(t)
	yml := "version: \"2.4\"\nservices:\n  a:\n    image: " + img + "\n  b:\n    image: " + img + "\n"
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(cmd[1:], "-f", file, "-p", project, "exec", "-T", service, "cat", "/etc/marker")
	out, err := exec.Command(cmd[0], args...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("%s %v: %q, %v", cmd[0], args, out, err)
	}
}

// removeMembersAndNetworks force-removes a project's containers and networks, keeping named volumes.
func removeMembersAndNetworks(t *testing.T, b *Backend, project string) {
	t.Helper()
	ctx := context.Background()
	cs, err := b.members(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if _, err := b.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			t.Fatal(err)
		}
	}
	ns, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelProject+"="+project)})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		if _, err := b.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStartOrder(t *testing.T) {
	m := func(svc, deps string, hc *container.HostConfig) memberRecipe {
		if hc == nil {
			hc = &container.HostConfig{}
		}
		return memberRecipe{OldID: "id-" + svc, Name: "p-" + svc + "-1", Service: svc, HostConfig: hc,
			Config: &container.Config{Labels: map[string]string{LabelDependsOn: deps}}}
	}
	tests := []struct {
		name string
		in   []memberRecipe
		want []string
	}{
		{"no deps: by service", []memberRecipe{m("c", "", nil), m("a", "", nil), m("b", "", nil)}, []string{"a", "b", "c"}},
		{"chain", []memberRecipe{m("a", "b:service_started:false", nil), m("b", "c:service_healthy:true", nil), m("c", "", nil)}, []string{"c", "b", "a"}},
		{"v1 label and unknown dep", []memberRecipe{m("a", "b,ghost", nil), m("b", "", nil)}, []string{"b", "a"}},
		{"network_mode container", []memberRecipe{m("a", "", &container.HostConfig{NetworkMode: "container:id-z"}), m("z", "", nil)}, []string{"z", "a"}},
		{"cycle still places all", []memberRecipe{m("a", "b", nil), m("b", "a", nil), m("c", "", nil)}, []string{"c", "a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range startOrder(tt.in) {
				got = append(got, r.Service)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("order %v, want %v", got, tt.want)
			}
		})
	}
}
