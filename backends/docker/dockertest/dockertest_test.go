package dockertest

import (
	"context"
	"testing"

	"github.com/moby/moby/client"
)

func TestMain(m *testing.M) { Main(m) }

func TestProjectCreatesLabelledRunningContainers(t *testing.T) {
	cli := Engine(t)
	Project(t, "rktest-harness-i"+RunID, Service{Name: "default"}, Service{Name: "web"})
	f := make(client.Filters).Add("label", "com.docker.compose.project=rktest-harness-i"+RunID).Add("label", LabelTest+"=1")
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 2 {
		t.Fatalf("want 2 running containers, got %d", len(res.Items))
	}
}

// A run whose owning process has ended is swept by the next test process; a run with a live
// owner on any of its resources is not, even beside a dead one (a child that adopted it).
func TestSweepDeadRemovesOnlyRunsWithNoLiveOwner(t *testing.T) {
	cli := Engine(t)
	ctx := context.Background()
	deadOwner := "999999999:1" // beyond any pid_max
	mk := func(name, run, own string) {
		t.Helper()
		l := Labels(map[string]string{LabelRun: run, LabelOwner: own})
		if _, err := cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Labels: l}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = cli.NetworkRemove(context.Background(), name, client.NetworkRemoveOptions{}) })
	}
	deadRun, mixedRun := "dead"+RunID, "mixed"+RunID
	mk("rktest-dead-"+RunID, deadRun, deadOwner)
	mk("rktest-mixed-dead-"+RunID, mixedRun, deadOwner)
	mk("rktest-mixed-live-"+RunID, mixedRun, owner)
	// A run that left only an image (as a build whose user died mid-test does).
	imageOnlyRun := "imageonly" + RunID
	img := "rangekeeper-test/sweep-dead:" + RunID
	if err := BuildImage(ctx, cli, img, Labels(map[string]string{LabelRun: imageOnlyRun, LabelOwner: deadOwner}),
		map[string][]byte{"/empty": nil}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), img, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
	if !ownerAlive(owner) || ownerAlive(deadOwner) || !ownerAlive("not an owner") {
		t.Fatalf("ownerAlive: self %v, dead %v, unreadable %v", ownerAlive(owner), ownerAlive(deadOwner), ownerAlive("not an owner"))
	}
	SweepDead()
	has := func(name string) bool {
		res, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("name", name)})
		return err == nil && len(res.Items) > 0
	}
	if has("rktest-dead-" + RunID) {
		t.Error("a dead run's network survived the sweep")
	}
	if _, err := cli.ImageInspect(ctx, img); err == nil {
		t.Error("a dead run's image survived the sweep")
	}
	if !has("rktest-mixed-dead-"+RunID) || !has("rktest-mixed-live-"+RunID) {
		t.Error("a run with a live owner was swept")
	}
}
