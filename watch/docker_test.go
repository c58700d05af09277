package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

func TestMain(m *testing.M) { dockertest.Main(m) }

// dockerRig is the real thing: a Docker backend under a supervisor, a state file, and the watch
// running over both, as the workbench wires them.
func dockerRig(t *testing.T) (*docker.Backend, *state.DB, *Watcher) {
	t.Helper()
	dockertest.Engine(t)
	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	sup := supervisor.New([]backends.Backend{b}, supervisor.DefaultBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	wait := sup.Start(ctx)
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(sup, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; wait(); db.Close() })
	return b, db, w
}

var driftRuns atomic.Int32

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

// `docker network connect <egress-net> <agent>` on a hardened running sandbox raises a drift
// alert naming the network and the connect event; `docker exec -u 0` raises an exec alert naming
// the user and command, without the arguments.
func TestDockerNetworkConnectAndRootExecRaiseAlerts(t *testing.T) {
	b, db, _ := dockerRig(t)
	cli := dockertest.Engine(t)
	ctx := context.Background()
	project := fmt.Sprintf("rk-drift-%s-%d", dockertest.RunID, driftRuns.Add(1)) // unique under -count
	dockertest.Project(t, project)
	inner := project + "_inner"
	if _, err := cli.NetworkCreate(ctx, inner, client.NetworkCreateOptions{Driver: "bridge", Internal: true, Labels: dockertest.Labels(map[string]string{
		docker.LabelProject: project, docker.LabelNetwork: "inner"})}); err != nil {
		t.Fatal(err)
	}
	dockertest.StartService(t, project, inner, dockertest.Image(t), dockertest.Service{Name: "default"})
	egress := project + "-egress"
	if _, err := cli.NetworkCreate(ctx, egress, client.NetworkCreateOptions{Driver: "bridge", Labels: dockertest.Labels(nil)}); err != nil {
		t.Fatal(err)
	}
	agent := project + "-default-1"
	t.Cleanup(func() { // before the agent is removed: disconnect it first, or the removal fails
		_, _ = cli.NetworkDisconnect(context.Background(), egress, client.NetworkDisconnectOptions{Container: agent, Force: true})
		_, _ = cli.NetworkRemove(context.Background(), egress, client.NetworkRemoveOptions{})
	})
	id := b.SandboxID(project)
	waitFor(t, "the sandbox's baseline", func() bool {
		bs, _ := db.Baselines()
		for _, bl := range bs {
			if bl.SandboxID == id {
				return true
			}
		}
		return false
	})
	start := time.Now()
	if _, err := cli.NetworkConnect(ctx, egress, client.NetworkConnectOptions{Container: agent}); err != nil {
		t.Fatal(err)
	}
	var drift state.Alert
	waitFor(t, "the drift alert", func() bool {
		as, _ := db.Alerts(state.AlertQuery{SandboxID: id})
		for _, a := range as {
			if a.Kind == state.AlertDrift && a.Rule == "CMP-N03" && strings.Contains(a.After, egress) {
				drift = a
				return true
			}
		}
		return false
	})
	t.Logf("drift alert stored %s after the connect", time.Since(start))
	if drift.Severity < catalog.SeverityMedium || drift.Member != agent || drift.Event == nil ||
		drift.Event.Attrs["network"] != egress || !strings.Contains(drift.Before, "not in baseline") {
		t.Errorf("drift alert %+v (event %+v)", drift, drift.Event)
	}

	const secret = "sk-live-0123456789abcdefghijklmnopqrstu"
	ex, err := cli.ExecCreate(ctx, agent, client.ExecCreateOptions{User: "0", Cmd: []string{"sh", "-c", "echo " + secret + " >/dev/null"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ExecStart(ctx, ex.ID, client.ExecStartOptions{Detach: true}); err != nil {
		t.Fatal(err)
	}
	var execAlert state.Alert
	waitFor(t, "the exec alert", func() bool {
		as, _ := db.Alerts(state.AlertQuery{SandboxID: id})
		for _, a := range as {
			if a.Kind == state.AlertExec {
				execAlert = a
				return true
			}
		}
		return false
	})
	raw, _ := json.Marshal(execAlert)
	if execAlert.Event == nil || execAlert.Event.Attrs["user"] != "0" || execAlert.Event.Attrs["command"] != "sh" ||
		!strings.Contains(execAlert.Summary, "as user 0") || execAlert.Severity != catalog.SeverityMedium {
		t.Errorf("exec alert %s", raw)
	}
	if strings.Contains(string(raw), secret) || strings.Contains(string(raw), "echo") {
		t.Errorf("exec alert carries the arguments: %s", raw)
	}
}
