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
