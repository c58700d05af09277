package docker

import (
	"context"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

func TestStatsSamplesEveryMember(t *testing.T) {
	cli := dockertest.Engine(t)
	project := "rk-stats-" + dockertest.RunID
	dockertest.Project(t, project,
		dockertest.Service{Name: "busy", Cmd: []string{"sh", "-c", "i=0; while :; do i=$((i+1)); done"}},
		dockertest.Service{Name: "idle"},
		dockertest.Service{Name: "stopped"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := cli.ContainerStop(ctx, project+"-stopped-1", client.ContainerStopOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := New(Endpoint{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var sr backends.StatsReader = b // Docker implements the optional capability
	ss, err := sr.Stats(ctx, b.SandboxID(project))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]backends.MemberStats{}
	for _, s := range ss {
		by[s.Member] = s
	}
	if len(by) != 3 {
		t.Fatalf("got stats for %v, want 3 members", ss)
	}
	busy, idle, stopped := by[project+"-busy-1"], by[project+"-idle-1"], by[project+"-stopped-1"]
	// A spinning shell gets a whole core on an idle machine but far less when the machine is busy
	// (15 % was seen at load 15 on 2 cores), so compare with the idle member, not a fixed share.
	if !busy.Running || busy.MemBytes == 0 || busy.CPUPercent < 2 {
		t.Errorf("busy member: %+v, want running with memory and CPU >= 2%%", busy)
	}
	if !idle.Running || idle.CPUPercent+1 > busy.CPUPercent {
		t.Errorf("idle member: %+v, want running and at least 1 point below busy (%.1f%%)", idle, busy.CPUPercent)
	}
	if stopped.Running || stopped.CPUPercent != 0 || stopped.MemBytes != 0 {
		t.Errorf("stopped member: %+v, want zero use", stopped)
	}
	if _, err := sr.Stats(ctx, "docker:other/x"); err == nil {
		t.Error("a sandbox of another endpoint was accepted")
	}
}
