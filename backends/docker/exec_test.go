package docker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

func TestExec(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-exec-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"}, dockertest.Service{Name: "aux"})
	id := b.SandboxID(project)
	ctx := context.Background()

	tests := []struct {
		name       string
		req        backends.ExecRequest
		wantOut    string
		wantErrOut string
		wantCode   int
	}{
		{"demux and exit code", backends.ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}},
			"out\n", "err\n", 3},
		{"stdin", backends.ExecRequest{Cmd: []string{"cat"}, Stdin: strings.NewReader("from stdin")},
			"from stdin", "", 0},
		{"env user workdir", backends.ExecRequest{Cmd: []string{"sh", "-c", "echo $FOO; id -u; pwd"},
			Env: []string{"FOO=bar"}, User: "1234", WorkDir: "/tmp"}, "bar\n1234\n/tmp\n", "", 0},
		{"default member is service default", backends.ExecRequest{Cmd: []string{"hostname"}},
			"", "", 0},
		{"member by service", backends.ExecRequest{Member: "aux", Cmd: []string{"sh", "-c", "echo $HOSTNAME"}},
			"", "", 0},
		{"member by container name", backends.ExecRequest{Member: project + "-aux-1", Cmd: []string{"true"}},
			"", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := b.Exec(ctx, id, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.TimedOut {
				t.Fatalf("exit %d timedOut %v, want %d", res.ExitCode, res.TimedOut, tt.wantCode)
			}
			if tt.wantOut != "" && string(res.Stdout) != tt.wantOut {
				t.Errorf("stdout %q, want %q", res.Stdout, tt.wantOut)
			}
			if string(res.Stderr) != tt.wantErrOut {
				t.Errorf("stderr %q, want %q", res.Stderr, tt.wantErrOut)
			}
		})
	}

	// The selected member is the one asked for: compare container hostnames (= short IDs).
	def, _ := b.member(ctx, id, "")
	aux, _ := b.member(ctx, id, "aux")
	if def.Labels[LabelService] != "default" || aux.Labels[LabelService] != "aux" {
		t.Fatalf("member selection: default→%s aux→%s", def.Labels[LabelService], aux.Labels[LabelService])
	}
	byID, err := b.Exec(ctx, id, backends.ExecRequest{Member: aux.ID[:12], Cmd: []string{"hostname"}})
	if err != nil || strings.TrimSpace(string(byID.Stdout)) != aux.ID[:12] {
		t.Errorf("exec by ID prefix ran in %q (err %v), want %s", byID.Stdout, err, aux.ID[:12])
	}

	if _, err := b.Exec(ctx, id, backends.ExecRequest{Member: "nope", Cmd: []string{"true"}}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("unknown member: %v, want ErrNotFound", err)
	}
	if _, err := b.Exec(ctx, b.Name()+"/container:x", backends.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, backends.ErrNotSandbox) {
		t.Errorf("plain container: %v, want ErrNotSandbox", err)
	}
	if _, err := b.Exec(ctx, id, backends.ExecRequest{}); err == nil {
		t.Error("empty command accepted")
	}
}

func TestExecWithoutDefaultServicePicksFirstAlphabetically(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-exec-nodef-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "zeta"}, dockertest.Service{Name: "alpha", Env: []string{"WHO=alpha"}})
	res, err := b.Exec(context.Background(), b.SandboxID(project), backends.ExecRequest{Cmd: []string{"sh", "-c", "echo $WHO"}})
	if err != nil || string(res.Stdout) != "alpha\n" {
		t.Fatalf("got %q, %v; want alpha", res.Stdout, err)
	}
}

// sleepers counts the test's marker processes still alive in the member.
func sleepers(t *testing.T, b *Backend, id string) int {
	t.Helper()
	res, err := b.Exec(context.Background(), id, backends.ExecRequest{Cmd: []string{"ps", "-o", "args"}})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(res.Stdout), "sleep 4321")
}

func TestExecTimeoutAndCancelKillTheProcess(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-exec-kill-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	id := b.SandboxID(project)

	start := time.Now()
	res, err := b.Exec(context.Background(), id, backends.ExecRequest{
		// 2 s: the engine, starting the shell on a machine saturated by a cold CI, must still get to
		// the partial output before the time-out.
		Cmd: []string{"sh", "-c", "echo started; exec sleep 4321"}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || string(res.Stdout) != "started\n" {
		t.Fatalf("timed out %v stdout %q; want timed out with partial output", res.TimedOut, res.Stdout)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("timeout of 2s took %s", el)
	}
	if n := sleepers(t, b, id); n != 0 {
		t.Fatalf("%d timed-out processes still run", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err = b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"sleep", "4321"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled exec: %v, want context.Canceled", err)
	}
	if n := sleepers(t, b, id); n != 0 {
		t.Fatalf("%d cancelled processes still run", n)
	}

	// Cancelled while the engine is still starting the process (under load a demo range and
	// parallel tests left one running): it must not start after the cancel and outlive it.
	for delay := range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(delay)*2*time.Millisecond, cancel)
		if _, err := b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"sleep", "4321"}}); err != nil && strings.Contains(err.Error(), "could not kill") {
			t.Errorf("cancelled %d ms in: %v", delay*2, err)
		}
		cancel()
	}
	if n := sleepers(t, b, id); n != 0 {
		t.Fatalf("%d processes cancelled while starting still run", n)
	}
}

func TestExecInStoppedMemberIsAClearError(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-exec-stopped-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default", Cmd: []string{"true"}})
	c, err := b.member(context.Background(), b.SandboxID(project), "")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "member exits", func() bool {
		ins, err := b.cli.ContainerInspect(context.Background(), c.ID, clientInspect)
		return err == nil && ins.Container.State.Status == container.StateExited
	})
	_, err = b.Exec(context.Background(), b.SandboxID(project), backends.ExecRequest{Cmd: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("exec in stopped member: %v, want an error saying it is not running", err)
	}
}
