package timeline

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/state"
)

func TestMain(m *testing.M) { dockertest.Main(m) }

// session is one run of rangekeeper: a supervisor over the real engine, the state file, the
// action layer and the recorder.
type session struct {
	db     *state.DB
	docker *docker.Backend
	sup    *supervisor.Supervisor
	layer  *action.Layer
	rec    *Recorder
	cancel context.CancelFunc
	done   chan error
	wait   func()
	closed bool
}

func startSession(t *testing.T, path string) *session {
	t.Helper()
	db, err := state.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := docker.New(docker.Endpoint{}, docker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sup := supervisor.New([]backends.Backend{b}, supervisor.DefaultBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{db: db, docker: b, sup: sup, cancel: cancel, done: make(chan error, 1),
		layer: action.New(sup, db, action.Options{Identity: action.Identity{Operator: "tester@host", Transport: action.TransportStandalone}, LockDir: t.TempDir()}),
		rec:   &Recorder{Sup: sup, DB: db, Heartbeat: 200 * time.Millisecond}}
	s.wait = sup.Start(ctx)
	go func() { s.done <- s.rec.Run(ctx) }()
	t.Cleanup(func() { s.stop(t) }) // a failed test's session, before its state file's directory goes
	return s
}

// stop ends the session (once).
func (s *session) stop(t *testing.T) {
	t.Helper()
	if s.closed {
		return
	}
	s.closed = true
	s.cancel()
	if err := <-s.done; err != nil {
		t.Errorf("recorder: %v", err)
	}
	s.wait()
	s.db.Close()
}

// waitUntil polls cond until it holds; on time-out it fails with what and, if given, explain's
// account of what was seen instead.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			seen := ""
			for _, f := range explain {
				seen += "\n" + f()
			}
			t.Fatalf("timed out waiting for %s%s", what, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// With the real engine: a member killed for memory and restarted by its policy, an exec through
// the action layer, and a network connect are recorded while rangekeeper runs; after it stops
// and starts again (a new supervisor, the state file reopened) the timeline shows them in order
// with their times, the journal's entries for the exec, and the recording sessions.
func TestTimelineRecordsRealEventsAcrossRestart(t *testing.T) {
	cli := dockertest.Engine(t)
	project := "inspect-timeline-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "web"})
	path := filepath.Join(t.TempDir(), "state.db")
	s := startSession(t, path)
	id := ""
	waitUntil(t, 20*time.Second, "the sandbox listed", func() bool {
		for _, sb := range s.sup.Fleet() {
			if sb.Name == project {
				id = sb.ID
				return true
			}
		}
		return false
	})

	// A member that eats memory until the kernel kills it, then is restarted by its policy and
	// sleeps (its marker file stays). It allocates only once the test has seen it start: the
	// engine's OOM watcher (containerd's shim) is registered just after the process starts, and an
	// OOM kill before that is never reported (seen on a loaded machine: exit 137, no "oom").
	// dd fills a 64 MiB buffer in one read, so the limit is hit at once.
	dockertest.StartService(t, project, project+"_default", dockertest.Image(t), dockertest.Service{Name: "default",
		Cmd: []string{"sh", "-c", "if [ -e /marker ]; then exec sleep 3600; fi; touch /marker; " +
			"until [ -e /go ]; do sleep 0.1; done; exec dd if=/dev/zero of=/dev/null bs=64M count=1"},
		HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode(project + "_default"),
			Resources:     container.Resources{Memory: 24 << 20, MemorySwap: 24 << 20},
			RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyOnFailure, MaximumRetryCount: 2}}})
	member := project + "-default-1"
	recorded := func(kinds ...string) func() bool { // the kinds recorded for member, in this order
		return func() bool {
			if err := s.rec.Flush(); err != nil {
				t.Fatal(err)
			}
			es, _ := s.db.Timeline(state.TimelineQuery{SandboxID: id})
			i := 0
			for _, e := range es {
				if i < len(kinds) && e.Member == member && e.Kind == kinds[i] {
					i++
				}
			}
			return i == len(kinds)
		}
	}
	// The engine reports the OOM kill and the exit on separate paths (the shim's OOM watcher and
	// its reaper), so "oom" may come before or after "die"; both come before the restart.
	oomRestart := func(then ...string) func() bool {
		return func() bool { return recorded("oom")() && recorded(append([]string{"die", "start"}, then...)...)() }
	}
	recordedSoFar := func() string {
		es, _ := s.db.Timeline(state.TimelineQuery{SandboxID: id})
		engine := "?"
		if c, err := cli.ContainerInspect(context.Background(), member, client.ContainerInspectOptions{}); err == nil {
			st := c.Container.State
			engine = fmt.Sprintf("%s, OOM-killed %v, exit code %d, restarts %d", st.Status, st.OOMKilled, st.ExitCode, c.Container.RestartCount)
		}
		return "the engine says the member is " + engine + "; recorded:\n" + story(es)
	}
	waitUntil(t, 20*time.Second, "the member started", recorded("start"), recordedSoFar)
	if err := s.docker.CopyTo(context.Background(), id, "default", "/go", nil, 0); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the member OOM-killed and started again", oomRestart(), recordedSoFar)
	res, err := s.layer.Exec(context.Background(), action.Request{SandboxID: id}, backends.ExecRequest{Member: "default", Cmd: []string{"true"}, Timeout: 20 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v %+v", err, res)
	}
	extra := project + "_extra"
	if _, err := cli.NetworkCreate(context.Background(), extra, client.NetworkCreateOptions{Driver: "bridge", Labels: dockertest.Labels(nil)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before the member's own clean-up: a network with a member attached stays
		_, _ = cli.NetworkDisconnect(context.Background(), extra, client.NetworkDisconnectOptions{Container: member, Force: true})
		_, _ = cli.NetworkRemove(context.Background(), extra, client.NetworkRemoveOptions{})
	})
	if _, err := cli.NetworkConnect(context.Background(), extra, client.NetworkConnectOptions{Container: member}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "the network connect recorded", oomRestart("exec", "network-connect"), recordedSoFar)
	s.stop(t)

	s = startSession(t, path)
	waitUntil(t, 20*time.Second, "the second session listing the fleet", func() bool { return len(s.sup.Fleet()) > 0 })
	es, err := s.db.Timeline(state.TimelineQuery{SandboxID: id})
	if err != nil {
		t.Fatal(err)
	}
	// The story, in order: death (the OOM kill beside it, either side), restart, exec (journal
	// intent, engine exec, journal outcome), network connect, the first session's stop and the
	// second's start.
	steps := []func(state.TimelineEntry) bool{
		func(e state.TimelineEntry) bool { return e.Kind == "die" && e.Member == member },
		func(e state.TimelineEntry) bool { return e.Kind == "start" && e.Member == member },
		func(e state.TimelineEntry) bool {
			return e.Source == "journal" && e.Kind == "exec" && e.Detail == "intent"
		},
		func(e state.TimelineEntry) bool {
			return e.Source == "backend" && e.Kind == "exec" && e.Member == member
		},
		func(e state.TimelineEntry) bool { return e.Source == "journal" && e.Kind == "exec" && e.Detail == "ok" },
		func(e state.TimelineEntry) bool { return e.Kind == "network-connect" && e.Member == member },
		func(e state.TimelineEntry) bool { return e.Source == "rangekeeper" && e.Kind == "gap" },
		func(e state.TimelineEntry) bool { return e.Source == "rangekeeper" && e.Kind == "recording-start" },
	}
	next, ooms := 0, 0
	var last time.Time
	for _, e := range es {
		if e.Time.Before(last) {
			t.Errorf("timeline out of order at %+v", e)
		}
		last = e.Time
		if e.Source == "backend" && e.Kind == "oom" && e.Member == member {
			ooms++
		}
		if next < len(steps) && steps[next](e) {
			next++
		}
	}
	if next < len(steps) || ooms == 0 {
		t.Fatalf("the timeline lacks step %d of the story in order (or the OOM kill: %d):\n%s", next, ooms, story(es))
	}
	for _, e := range es {
		if e.Kind == "die" && e.Member == member && e.Attrs["exit_code"] != "137" {
			t.Errorf("OOM death without exit code 137: %+v", e)
		}
	}
}

// story is a timeline, one entry a line, for failure messages.
func story(es []state.TimelineEntry) string {
	lines := make([]string, 0, len(es))
	for _, e := range es {
		lines = append(lines, e.Time.Format("15:04:05.000")+" "+e.Source+":"+e.Kind+" "+e.Member+" "+e.Detail)
	}
	return strings.Join(lines, "\n")
}
