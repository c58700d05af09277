package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/backends/logring"
)

// readAll drains a stream until it ends or until stop says enough.
func readAll(t *testing.T, s backends.LogStream, stop func([]backends.LogLine) bool) []backends.LogLine {
	t.Helper()
	var out []backends.LogLine
	for {
		l, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("logs: %v", err)
		}
		out = append(out, l)
		if stop != nil && stop(out) {
			return out
		}
	}
}

// A sandbox's logs carry both streams of each member, demultiplexed and named by service, with
// the engine's timestamps; a TTY member's single stream arrives as stdout; one member can be
// asked for alone, and --tail keeps only the last lines.
func TestLogsBothStreamsAndTTY(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-logs-" + dockertest.RunID
	dockertest.Project(t, project,
		dockertest.Service{Name: "default", Cmd: []string{"sh", "-c", "echo out-1; echo err-1 >&2; echo out-2; echo err-2 >&2; sleep 3600"}},
		dockertest.Service{Name: "web", Cmd: []string{"sh", "-c", "echo web-ready; sleep 3600"}},
	)
	cli := dockertest.Engine(t)
	netName := project + "_default"
	// A TTY member: one raw stream, no multiplexing headers.
	ttyName := project + "-tty-1"
	res, err := cli.ContainerCreate(context.Background(), client.ContainerCreateOptions{Name: ttyName,
		Config: &container.Config{Image: dockertest.Image(t), Tty: true, Cmd: []string{"sh", "-c", "echo tty-line; sleep 3600"},
			Labels: dockertest.Labels(map[string]string{LabelProject: project, LabelService: "tty", LabelNumber: "1", LabelOneoff: "False"})},
		HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode(netName)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
	})
	if _, err := cli.ContainerStart(context.Background(), res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	id := b.SandboxID(project)
	ctx := context.Background()

	var lines []backends.LogLine
	waitFor(t, 15*time.Second, "every member's first lines", func() bool {
		s, err := b.Logs(ctx, id, backends.LogOptions{Tail: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		lines = readAll(t, s, nil)
		return len(lines) >= 6
	})
	got := map[string]string{}
	for _, l := range lines {
		got[l.Text] = l.Member + "/" + l.Stream
		if l.Time.IsZero() || time.Since(l.Time) > time.Minute || strings.Contains(l.Text, "Z ") {
			t.Errorf("line %q: time %v not the engine's (or its stamp left in the text)", l.Text, l.Time)
		}
	}
	want := map[string]string{"out-1": "default/stdout", "out-2": "default/stdout", "err-1": "default/stderr", "err-2": "default/stderr",
		"web-ready": "web/stdout", "tty-line": "tty/stdout"}
	for text, from := range want {
		if got[text] != from {
			t.Errorf("line %q: from %q, want %q (all: %v)", text, got[text], from, got)
		}
	}

	s, err := b.Logs(ctx, id, backends.LogOptions{Member: "default", Tail: 1})
	if err != nil {
		t.Fatal(err)
	}
	one := readAll(t, s, nil)
	s.Close()
	if len(one) != 1 || one[0].Member != "default" || one[0].Text != "err-2" && one[0].Text != "out-2" {
		t.Errorf("member default, tail 1: %+v", one)
	}
	if _, err := b.Logs(ctx, id, backends.LogOptions{Member: "nope"}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("unknown member: %v, want ErrNotFound", err)
	}
}

// A member flooding its output is followed live: a ring of a fixed size holds only the newest
// lines however many arrive (the bound holds), and a line planted mid-stream is found by search
// while it is still held.
func TestLogsFollowFloodRingBoundAndSearch(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-flood-" + dockertest.RunID
	const total, planted = 60_000, 59_000
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do if [ $i -eq %d ]; then echo PLANTED-NEEDLE-$i; else echo line-$i; fi; i=$((i+1)); done; sleep 3600`, total, planted)
	dockertest.Project(t, project, dockertest.Service{Name: "default", Cmd: []string{"sh", "-c", script}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := b.Logs(ctx, b.SandboxID(project), backends.LogOptions{Follow: true, Tail: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ring := logring.New(5000)
	for ring.Total() < total {
		l, err := s.Next()
		if err != nil {
			t.Fatalf("after %d lines: %v", ring.Total(), err)
		}
		ring.AddLine(l)
		if ring.Len() > ring.Cap() {
			t.Fatalf("ring holds %d lines, bound %d", ring.Len(), ring.Cap())
		}
	}
	if ring.Len() != 5000 || ring.Dropped() != total-5000 {
		t.Errorf("ring: %d held, %d dropped; want 5000 and %d", ring.Len(), ring.Dropped(), total-5000)
	}
	if first := ring.At(0).Text; first != fmt.Sprintf("line-%d", total-5000) {
		t.Errorf("oldest held line %q, want the %dth", first, total-5000)
	}
	i := ring.Find("planted-needle", 0, true)
	if i < 0 || ring.At(i).Text != fmt.Sprintf("PLANTED-NEEDLE-%d", planted) {
		t.Fatalf("search did not find the planted line (index %d)", i)
	}
	if back := ring.Find("planted-needle", ring.Len()-1, false); back != i {
		t.Errorf("backward search found %d, forward %d", back, i)
	}
}
