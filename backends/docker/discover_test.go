package docker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

func TestTaskHintAndInspectPattern(t *testing.T) {
	tests := []struct {
		project string
		inspect bool
		task    string
	}{
		{"inspect-ctf_web-iab12cd", true, "ctf_web"},
		{"inspect-my-task-name-ixyz123", true, "my-task-name"},
		{"inspect-task-ielnkhh", true, "task"},
		{"inspect--iabcdef", true, ""},
		{"myproject", false, ""},
		{"inspect-Upper-iabcdef", false, ""},
		{"inspect-short-iab", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.project, func(t *testing.T) {
			if got := IsInspectProject(tt.project); got != tt.inspect {
				t.Errorf("IsInspectProject = %v, want %v", got, tt.inspect)
			}
			if got := TaskHint(tt.project); got != tt.task {
				t.Errorf("TaskHint = %q, want %q", got, tt.task)
			}
		})
	}
}

// recorder collects a watch's events for assertions.
type recorder struct {
	mu     sync.Mutex
	fleet  map[string]backends.Sandbox
	resets int
}

func (r *recorder) emit(ev backends.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case backends.EventReset:
		r.resets++
		r.fleet = map[string]backends.Sandbox{}
		for _, s := range ev.Sandboxes {
			r.fleet[s.ID] = s
		}
	case backends.EventUpsert:
		r.fleet[ev.Sandbox.ID] = ev.Sandbox
	case backends.EventRemove:
		delete(r.fleet, ev.ID)
	}
}

func (r *recorder) get(id string) (backends.Sandbox, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.fleet[id]
	return s, ok
}

// waitFor polls the recorder (not the engine) until cond holds; the engine is never polled.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("not within %s: %s", within, what)
}

func newTestBackend(t *testing.T, opts Options) *Backend {
	t.Helper()
	dockertest.Engine(t)
	b, err := New(Endpoint{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestWatchGroupsComposeProjectsLive(t *testing.T) {
	b := newTestBackend(t, Options{All: true})
	project := "inspect-ctf_web-i" + dockertest.RunID + "zz"
	dockertest.Project(t, project, dockertest.Service{Name: "default"}, dockertest.Service{Name: "victim"})

	// A plain container without compose labels: listed with --all, never actionable.
	cli := dockertest.Engine(t)
	plainName := "rktest-plain-" + dockertest.RunID
	res, err := cli.ContainerCreate(context.Background(), client.ContainerCreateOptions{Name: plainName,
		Config: &container.Config{Image: dockertest.Image(t), Cmd: []string{"sleep", "3600"}, Labels: dockertest.Labels(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	done := make(chan error, 1)
	go func() { done <- b.Watch(ctx, rec.emit) }()

	id := b.SandboxID(project)
	waitFor(t, 10*time.Second, "initial list contains the project", func() bool { _, ok := rec.get(id); return ok })
	sb, _ := rec.get(id)
	if !sb.Inspect || !sb.Actionable || sb.Task != "ctf_web" || sb.Backend != backends.KindDocker {
		t.Errorf("sandbox = inspect %v actionable %v task %q backend %s", sb.Inspect, sb.Actionable, sb.Task, sb.Backend)
	}
	if len(sb.Members) != 2 || sb.Members[0].Service != "default" || sb.Members[1].Service != "victim" {
		t.Fatalf("members = %+v", sb.Members)
	}
	if sb.Status != backends.StatusRunning {
		t.Errorf("status = %s, want running", sb.Status)
	}
	plain, ok := rec.get(b.Name() + "/container:" + plainName)
	if !ok || plain.Actionable {
		t.Errorf("plain container listed=%v actionable=%v; want listed, not actionable", ok, plain.Actionable)
	}
	if _, err := b.ProjectOf(plain.ID); !errors.Is(err, backends.ErrNotSandbox) {
		t.Errorf("ProjectOf(plain) = %v, want ErrNotSandbox", err)
	}

	// A member started after the watch began appears from the event stream within 2 s.
	started := time.Now()
	dockertest.StartService(t, project, project+"_default", dockertest.Image(t), dockertest.Service{Name: "scorer"})
	waitFor(t, 2*time.Second, "new member appears", func() bool { s, _ := rec.get(id); return len(s.Members) == 3 })
	t.Logf("new member visible after %s", time.Since(started).Round(time.Millisecond))

	// Removing every container of the project removes the sandbox.
	dockertest.RemoveProject(cli, project)
	waitFor(t, 5*time.Second, "project disappears", func() bool { _, ok := rec.get(id); return !ok })

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch after cancel = %v, want nil", err)
	}
	if rec.resets != 1 {
		t.Errorf("resets = %d, want 1 (no polling re-lists)", rec.resets)
	}
}

func TestWatchWithoutAllHidesPlainContainers(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := dockertest.Engine(t)
	name := "rktest-hidden-" + dockertest.RunID
	res, err := cli.ContainerCreate(context.Background(), client.ContainerCreateOptions{Name: name,
		Config: &container.Config{Image: dockertest.Image(t), Cmd: []string{"sleep", "3600"}, Labels: dockertest.Labels(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true}) })
	list, err := b.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Name == name {
			t.Fatalf("plain container %s listed without --all", name)
		}
	}
}

func TestDeadSocketIsAnError(t *testing.T) {
	b, err := New(Endpoint{Name: "dead", Host: "unix://" + t.TempDir() + "/no.sock"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = b.Watch(ctx, func(backends.Event) { t.Error("dead backend emitted an event") })
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Watch on a dead socket = %v (ctx %v), want a prompt error", err, ctx.Err())
	}
	if want := "docker:dead"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the backend %q", err, want)
	}
}
