package demos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

func TestMain(m *testing.M) { dockertest.Main(m) }

func buildAgent(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "agent")
	cmd := exec.Command("go", "build", "-o", out, "./agent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build agent: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDemoRangeUpAndDown starts a real demo range (its own instance, so an operator's running demo
// is untouched), checks what rangekeeper sees of it, and removes it. Demo resources also carry
// the test labels, so a crash still gets swept.
func TestDemoRangeUpAndDown(t *testing.T) {
	cli := dockertest.Engine(t)
	ctx := context.Background()
	busybox, _ := os.ReadFile(dockertest.BusyboxPath)
	opts := Options{Agent: buildAgent(t), Busybox: busybox, Labels: dockertest.Labels(nil), Instance: dockertest.RunID}
	bystander := operatorDemoResources(t, cli)
	if err := Up(ctx, cli, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { DownInstance(context.Background(), cli, opts.Instance) })

	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	list, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]backends.Sandbox{}
	for _, s := range list {
		byName[s.Name] = s
	}
	for _, p := range opts.Projects() {
		s, ok := byName[p.Name]
		if !ok {
			t.Fatalf("demo sandbox %s not listed", p.Name)
		}
		if !s.Inspect || s.Task == "" || s.Status != backends.StatusRunning {
			t.Errorf("%s: inspect=%v task=%q status=%s", p.Name, s.Inspect, s.Task, s.Status)
		}
		worst := s.WorstSeverity()
		switch {
		case p.Hardened && worst >= catalog.SeverityHigh:
			t.Errorf("hardened demo sandbox has %s findings: %+v", worst, s.Findings)
		case p.Weak && worst < catalog.SeverityHigh:
			t.Errorf("weak demo sandbox shows only %s findings: %+v", worst, s.Findings)
		}
	}

	if err := DownInstance(ctx, cli, opts.Instance); err != nil {
		t.Fatal(err)
	}
	f := make(client.Filters).Add("label", LabelDemo+"="+opts.Instance)
	cs, _ := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	ns, _ := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	is, _ := cli.ImageList(ctx, client.ImageListOptions{Filters: f})
	if len(cs.Items)+len(ns.Items)+len(is.Items) != 0 {
		t.Fatalf("demo --down left %d containers, %d networks, %d images", len(cs.Items), len(ns.Items), len(is.Items))
	}
	if after := operatorDemoResources(t, cli); after != bystander {
		t.Errorf("the operator's demo range changed under the test:\nbefore %s\nafter  %s", bystander, after)
	}
}

// operatorDemoResources lists the IDs of the containers, networks and images of the operator's
// demo range (`make demo`), which a test run must never remove or replace.
func operatorDemoResources(t *testing.T, cli *client.Client) string {
	t.Helper()
	ctx := context.Background()
	f := make(client.Filters).Add("label", LabelDemo+"="+defaultInstance)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	is, _ := cli.ImageList(ctx, client.ImageListOptions{Filters: f})
	var ids []string
	for _, c := range cs.Items {
		ids = append(ids, c.ID)
	}
	for _, n := range ns.Items {
		ids = append(ids, n.ID)
	}
	for _, i := range is.Items {
		ids = append(ids, i.ID)
	}
	sort.Strings(ids)
	return fmt.Sprint(ids)
}
