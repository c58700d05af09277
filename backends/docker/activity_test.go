package docker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// activityRecorder collects what Watch emits.
type activityRecorder struct {
	mu    sync.Mutex
	acts  []backends.Activity
	fleet map[string]backends.Sandbox
}

func (r *activityRecorder) emit(ev backends.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case backends.EventActivity:
		r.acts = append(r.acts, *ev.Activity)
	case backends.EventReset:
		r.fleet = map[string]backends.Sandbox{}
		for _, sb := range ev.Sandboxes {
			r.fleet[sb.ID] = sb
		}
	case backends.EventUpsert:
		r.fleet[ev.Sandbox.ID] = ev.Sandbox
	}
}

func (r *activityRecorder) find(kind sandbox.ActivityKind, member string) (backends.Activity, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.acts {
		if a.Kind == kind && a.Member == member {
			return a, true
		}
	}
	return backends.Activity{}, false
}

// Watch reports what happens to a sandbox's members as Activity: an exec with its user and
// command name but never its arguments, network connects and disconnects with the network, and a
// member's death with its exit code; a network change also re-assesses the member's posture.
func TestWatchReportsActivity(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := dockertest.Engine(t)
	project := "rk-act-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	egress := project + "_egress"
	if _, err := cli.NetworkCreate(context.Background(), egress, client.NetworkCreateOptions{Driver: "bridge", Labels: dockertest.Labels(nil)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cli.NetworkRemove(context.Background(), egress, client.NetworkRemoveOptions{}) })
	r, stop := watchInto(t, b, project)
	id, member := b.SandboxID(project), project+"-default-1"

	const secret = "sk-test-0123456789abcdefghijklmnop"
	bg := context.Background()
	ex, err := cli.ExecCreate(bg, member, client.ExecCreateOptions{User: "0", Cmd: []string{"sh", "-c", "echo " + secret + " >/dev/null"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ExecStart(bg, ex.ID, client.ExecStartOptions{Detach: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.NetworkConnect(bg, egress, client.NetworkConnectOptions{Container: member}); err != nil {
		t.Fatal(err)
	}

	var exec backends.Activity
	waitFor(t, 10*time.Second, "the exec activity", func() bool { var ok bool; exec, ok = r.find(sandbox.ActExec, member); return ok })
	if exec.SandboxID != id || exec.Attrs["user"] != "0" || exec.Attrs["command"] != "sh" || exec.Attrs["privileged"] != "false" {
		t.Errorf("exec activity %+v; want user 0, command sh, not privileged", exec)
	}
	if strings.Contains(exec.Detail+exec.Actor+strings.Join(mapValues(exec.Attrs), " "), secret) {
		t.Errorf("exec activity carries its arguments: %+v", exec)
	}
	waitFor(t, 10*time.Second, "posture re-assessed with the egress network", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, f := range r.fleet[id].Findings {
			if strings.Contains(f.Evidence, egress) {
				return true
			}
		}
		return false
	})
	if _, err := cli.NetworkDisconnect(bg, egress, client.NetworkDisconnectOptions{Container: member}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the network activities", func() bool {
		c, ok1 := r.find(sandbox.ActNetConnect, member)
		d, ok2 := r.find(sandbox.ActNetDisconnect, member)
		return ok1 && ok2 && c.Attrs["network"] == egress && d.Attrs["network"] == egress && !c.Time.After(d.Time)
	})
	if _, err := cli.ContainerKill(bg, member, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the die activity", func() bool { d, ok := r.find(sandbox.ActDie, member); return ok && d.Attrs["exit_code"] != "" })
	stop()
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// watchInto runs b.Watch into a recorder until stop (which fails the test if Watch failed) and
// waits for project's sandbox to be listed.
func watchInto(t *testing.T, b *Backend, project string) (r *activityRecorder, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r = &activityRecorder{}
	done := make(chan error, 1)
	go func() { done <- b.Watch(ctx, r.emit) }()
	id := b.SandboxID(project)
	waitFor(t, 10*time.Second, "the sandbox listed", func() bool { r.mu.Lock(); defer r.mu.Unlock(); _, ok := r.fleet[id]; return ok })
	return r, func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
