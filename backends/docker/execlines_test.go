package docker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// The ring keeps each sandbox's last maxExecLines lines, oldest first, apart from every other
// sandbox's; hands out copies; skips empty and oversized lines; and forgets a sandbox that went.
func TestExecLinesRingIsBoundedPerSandbox(t *testing.T) {
	var x execLines
	if got := x.recent("docker:default/a"); got != nil {
		t.Fatalf("an unknown sandbox has lines: %q", got)
	}
	for i := range maxExecLines + 5 {
		x.add("docker:default/a", fmt.Sprintf("cmd %d", i))
	}
	x.add("docker:default/b", "only b")
	x.add("docker:default/a", "")
	x.add("docker:default/a", strings.Repeat("x", maxExecLine+1))
	got := x.recent("docker:default/a")
	var want []string
	for i := 5; i < maxExecLines+5; i++ {
		want = append(want, fmt.Sprintf("cmd %d", i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("lines of a = %q; want the last %d, oldest first: %q", got, maxExecLines, want)
	}
	got[0] = "changed by the caller"
	if x.recent("docker:default/a")[0] != want[0] {
		t.Error("recent handed out the ring's own storage")
	}
	if got := x.recent("docker:default/b"); !slices.Equal(got, []string{"only b"}) {
		t.Errorf("lines of b = %q", got)
	}
	x.forget("docker:default/a")
	if got := x.recent("docker:default/a"); got != nil {
		t.Errorf("a removed sandbox kept its lines: %q", got)
	}
	x.add("docker:default/c", "c")
	x.keep(map[string]bool{"docker:default/c": true})
	if x.recent("docker:default/b") != nil || x.recent("docker:default/c") == nil {
		t.Error("keep did not drop exactly the sandboxes no longer listed")
	}
}

// An exec_start event's command line goes to the ring only: the Activity made of the same event
// names the program, never the arguments, and execLine takes nothing from other events.
func TestExecLineIsTheOnlyReaderOfTheArguments(t *testing.T) {
	const secret = "sk-test-0123456789abcdefghijklmnop"
	m := events.Message{Type: events.ContainerEventType, Action: events.Action("exec_start: sh -c echo " + secret),
		Actor: events.Actor{ID: "c1", Attributes: map[string]string{"execID": ""}}, TimeNano: time.Now().UnixNano()}
	if line, ok := execLine(m); !ok || line != "sh -c echo "+secret {
		t.Fatalf("execLine = %q, %v", line, ok)
	}
	for _, other := range []events.Message{
		{Type: events.ContainerEventType, Action: events.ActionStart},
		{Type: events.ContainerEventType, Action: "exec_create: sh -c echo " + secret},
		{Type: events.NetworkEventType, Action: "exec_start: sh"},
	} {
		if line, ok := execLine(other); ok {
			t.Errorf("execLine(%s %s) = %q", other.Type, other.Action, line)
		}
	}
	// The engine does not know exec "": describeExec falls back to the event's command name.
	b := &Backend{}
	a := b.activityOf(context.Background(), m, "docker:default/p", "p-default-1")
	if a == nil || a.Kind != sandbox.ActExec || a.Attrs["command"] != "sh" {
		t.Fatalf("activity %+v; want an exec of sh", a)
	}
	if all := fmt.Sprintf("%+v", *a); strings.Contains(all, secret) || strings.Contains(all, "echo") {
		t.Errorf("the activity carries the arguments: %s", all)
	}
}

// Against the engine: a command run with arguments through docker exec is in RecentExecs of its
// sandbox (argv joined by spaces, as Inspect's linker takes it) and in no Activity; the lines go
// when the sandbox does.
func TestWatchRemembersExecLinesInMemory(t *testing.T) {
	b := newTestBackend(t, Options{})
	cli := dockertest.Engine(t)
	project := "rk-execl-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	r, stop := watchInto(t, b, project)
	id, member := b.SandboxID(project), project+"-default-1"

	const secret = "sk-test-abcdefghijklmnop0123456789"
	argv := []string{"timeout", "-k", "5s", "180s", "sh", "-c", "echo " + secret + " >/dev/null"}
	bg := context.Background()
	ex, err := cli.ExecCreate(bg, member, client.ExecCreateOptions{Cmd: argv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ExecStart(bg, ex.ID, client.ExecStartOptions{Detach: true}); err != nil {
		t.Fatal(err)
	}
	want := strings.Join(argv, " ")
	waitFor(t, 10*time.Second, "the exec line in RecentExecs", func() bool { return slices.Contains(b.RecentExecs(id), want) })
	waitFor(t, 10*time.Second, "the exec activity", func() bool { _, ok := r.find(sandbox.ActExec, member); return ok })
	r.mu.Lock()
	for _, a := range r.acts {
		if s := fmt.Sprintf("%+v", a); strings.Contains(s, secret) {
			t.Errorf("an activity carries the arguments: %s", s)
		}
	}
	r.mu.Unlock()
	if got := b.RecentExecs(id + "-other"); got != nil {
		t.Errorf("another sandbox has lines: %q", got)
	}

	dockertest.RemoveProject(cli, project)
	waitFor(t, 20*time.Second, "the lines dropped with the sandbox", func() bool { return b.RecentExecs(id) == nil })
	stop()
}
