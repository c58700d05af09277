package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/internal/staticbin/staticbintest"
	"github.com/rangekeeper/rangekeeper/probe"
)

// The crash suite kills rangekeeper (SIGKILL, from its own crash-point hook, compiled in only with
// the crashtest build tag) at steps of each multi-step action's own step log, on a real
// two-member sandbox with a named volume, then runs one `rangekeeper recover <sandbox>` and checks
// the sandbox is fully done or untouched, with nothing orphaned and no member paused.

var (
	crashBinOnce sync.Once
	crashBin     string
	crashBinErr  error
	crashDir     string
)

// crashBinaries builds rangekeeper with the crash-point hook, and the probe, once per run.
func crashBinaries(t *testing.T) (rk, probeBin string) {
	t.Helper()
	crashBinOnce.Do(func() {
		crashDir, crashBinErr = os.MkdirTemp("", "rk-crash-bin-")
		if crashBinErr != nil {
			return
		}
		crashBin = filepath.Join(crashDir, "rangekeeper")
		// The CLI is built with -race, as the tests are: it reuses their compiled packages (a
		// cold CI compiles the dependency graph once, not once more for this binary) and a data
		// race in a child fails the test. The probe is static, as it runs inside the sandbox.
		cmd := exec.Command("go", "build", "-race", "-tags", "crashtest", "-o", crashBin, "../cmd/rangekeeper")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			crashBinErr = fmt.Errorf("build the crashtest CLI: %v\n%s", err, out)
			return
		}
		_, crashBinErr = staticbintest.Build(crashDir, probe.BinaryName)
	})
	if crashBinErr != nil {
		t.Fatal(crashBinErr)
	}
	return crashBin, filepath.Join(crashDir, probe.BinaryName)
}

// child runs the built CLI as a real process; crashAt arms the crash-point hook.
type child struct {
	bin, probe, state, lockDir, home string
}

func (c child) run(t *testing.T, crashAt string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"--state", c.state}, args...)...)
	cmd.Env = append(os.Environ(), "RANGEKEEPER_LOCK_DIR="+c.lockDir, "XDG_CONFIG_HOME="+c.home, probe.EnvBinary+"="+c.probe)
	if crashAt != "" {
		cmd.Env = append(cmd.Env, "RANGEKEEPER_CRASH_AT="+crashAt)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code = 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode() // -1: killed by a signal
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// crashSandbox makes a two-member compose project with a named volume.
func crashSandbox(t *testing.T, project string) {
	t.Helper()
	cli := dockertest.Engine(t)
	if _, err := cli.VolumeCreate(context.Background(), client.VolumeCreateOptions{Name: project + "_data",
		Labels: dockertest.Labels(map[string]string{docker.LabelProject: project, "com.docker.compose.volume": "data"})}); err != nil {
		t.Fatal(err)
	}
	dockertest.Project(t, project,
		dockertest.Service{Name: "b"},
		dockertest.Service{Name: "a", DependsOn: "b:service_started:false", HostConfig: &container.HostConfig{Binds: []string{project + "_data:/data"}},
			Cmd: []string{"sh", "-c", "echo original > /data/v && exec sleep 3600"}},
	)
	t.Cleanup(func() { removeSnapshotImagesOf(cli, project) })
}

func removeSnapshotImagesOf(cli *client.Client, project string) {
	ctx := context.Background()
	imgs, err := cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: make(client.Filters).Add("label", docker.LabelSnapshotSandbox+"=docker:default/"+project)})
	if err != nil {
		return
	}
	for _, im := range imgs.Items {
		_, _ = cli.ImageRemove(ctx, im.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	}
}

// engineState is what the engine holds of a project.
type engineState struct {
	containers, running, paused, networks, volumes, images, helpers int
}

func inspectEngine(t *testing.T, project string) engineState {
	t.Helper()
	cli := dockertest.Engine(t)
	ctx := context.Background()
	var s engineState
	pf := make(client.Filters).Add("label", docker.LabelProject+"="+project)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: pf})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		s.containers++
		switch c.State {
		case container.StateRunning:
			s.running++
		case container.StatePaused:
			s.paused++
		}
	}
	ns, _ := cli.NetworkList(ctx, client.NetworkListOptions{Filters: pf})
	s.networks = len(ns.Items)
	vs, _ := cli.VolumeList(ctx, client.VolumeListOptions{Filters: pf})
	s.volumes = len(vs.Items)
	ims, _ := cli.ImageList(ctx, client.ImageListOptions{All: true, Filters: make(client.Filters).Add("label", docker.LabelSnapshotSandbox+"=docker:default/"+project)})
	s.images = len(ims.Items)
	hs, _ := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", "dev.rangekeeper.restore.sandbox=docker:default/"+project)})
	s.helpers = len(hs.Items)
	return s
}

func archiveDirs(t *testing.T, state string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(filepath.Dir(state), "snapshots"))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func execOut(t *testing.T, project, member, script string) string {
	t.Helper()
	cli := dockertest.Engine(t)
	ctx := context.Background()
	ex, err := cli.ExecCreate(ctx, project+"-"+member+"-1", client.ExecCreateOptions{Cmd: []string{"sh", "-c", script}, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "exec: " + err.Error()
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return "attach: " + err.Error()
	}
	defer att.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(att.Reader)
	// The attach stream is multiplexed; the checks look for substrings, so headers do no harm.
	return buf.String()
}

type crashCase struct {
	action string
	points []string // step prefixes from the action's own step log
}

var crashMatrix = []crashCase{
	{"snapshot", []string{"recorded", "planned", "paused", "committed", "archived volume", "saved record", "ended"}},
	{"revert", []string{"recorded", "planned", "removed", "restored volume", "created", "started", "ready", "ended"}},
	{"teardown", []string{"recorded", "planned", "removed 2 containers", "removed 1 networks", "removed 1 volumes", "removed 2 snapshot images", "ended"}},
	{"probe", []string{"recorded", "planned", "running", "ran", "ended"}},
}

func TestCrashMatrix(t *testing.T) {
	// Parallel with the package's other slow child-process test, and each case with the others
	// (-parallel bounds them): they mostly wait on the engine (commits, recreates) and share
	// nothing but the built binaries (each has its own project, state file and lock directory).
	// Run one after another they made this package the longest of `make test`.
	t.Parallel()
	dockertest.Engine(t)
	rk, probeBin := crashBinaries(t)
	var matrix []string // one line per case, in the table's order; each case writes its own
	for _, tc := range crashMatrix {
		for _, point := range tc.points {
			matrix = append(matrix, fmt.Sprintf("%-9s %-26s not run", tc.action, point))
		}
	}
	t.Run("cases", func(t *testing.T) {
		row := 0
		for _, tc := range crashMatrix {
			for i, point := range tc.points {
				line := &matrix[row]
				row++
				t.Run(tc.action+"@"+point, func(t *testing.T) {
					t.Parallel()
					project := fmt.Sprintf("rk-crash-%s-%d-%s", tc.action, i, dockertest.RunID)
					crashSandbox(t, project)
					dir := t.TempDir()
					c := child{bin: rk, probe: probeBin, state: filepath.Join(dir, "state.db"), lockDir: filepath.Join(dir, "locks"), home: dir}
					result := crashOne(t, c, tc.action, point, project)
					*line = fmt.Sprintf("%-9s %-26s %s", tc.action, point, result)
				})
			}
		}
	})
	t.Logf("crash matrix (action, kill point, state after one `rangekeeper recover`):\n%s", strings.Join(matrix, "\n"))
}

// crashOne prepares the action, kills it at point, recovers and checks; it returns the outcome.
func crashOne(t *testing.T, c child, action, point, project string) string {
	t.Helper()
	switch action {
	case "revert", "teardown":
		if _, stderr, code := c.run(t, "", "snapshot", project, "--name", "before"); code != 0 {
			t.Fatalf("snapshot: %d %s", code, stderr)
		}
		execOut(t, project, "a", "echo changed > /data/v")
	}
	args := map[string][]string{
		"snapshot": {"snapshot", project}, "revert": {"revert", "--yes", project}, "teardown": {"teardown", "--yes", project},
		"probe": {"probe", project, "--member", "a"},
	}[action]
	_, stderr, code := c.run(t, action+":"+point, args...)
	if code != -1 {
		t.Fatalf("%s did not die at %q: exit %d\n%s", action, point, code, stderr)
	}
	out, stderr, code := c.run(t, "", "recover", project)
	if code != 0 {
		t.Fatalf("recover: exit %d\n%s\n%s", code, out, stderr)
	}
	t.Logf("recover: %s", strings.TrimSpace(out))
	if list, _, _ := c.run(t, "", "recover"); !strings.Contains(list, "no interrupted actions") {
		t.Errorf("after recover, still interrupted:\n%s", list)
	}
	e := inspectEngine(t, project)
	if e.paused != 0 || e.helpers != 0 {
		t.Errorf("left behind: %+v", e)
	}
	snaps, _, _ := c.run(t, "", "snapshots", "ls", "-o", "json", "docker:default/"+project)
	nsnaps := strings.Count(snaps, `"id"`)
	dirs := archiveDirs(t, c.state)
	switch action {
	case "snapshot":
		if e.running != 2 {
			t.Errorf("members not all running: %+v", e)
		}
		switch {
		case nsnaps == 1 && e.images == 2 && len(dirs) == 1:
			return "snapshotted"
		case nsnaps == 0 && e.images == 0 && len(dirs) == 0:
			return "untouched (rolled back)"
		}
		t.Errorf("half a snapshot: %d records, %d images, archives %v", nsnaps, e.images, dirs)
	case "revert":
		v := execOut(t, project, "a", "cat /data/v")
		switch {
		case e.running == 2 && strings.Contains(v, "original"):
			return "reverted"
		case e.running == 2 && strings.Contains(v, "changed"):
			return "untouched"
		}
		t.Errorf("half a revert: %+v, /data/v %q", e, v)
	case "teardown":
		switch {
		case e.containers == 0 && e.networks == 0 && e.volumes == 0 && e.images == 0 && nsnaps == 0 && len(dirs) == 0:
			return "torn down"
		case e.running == 2 && e.volumes == 1 && e.images == 2 && nsnaps == 1 && len(dirs) == 1:
			return "untouched"
		}
		t.Errorf("half a teardown: %+v, %d records, archives %v", e, nsnaps, dirs)
	case "probe":
		left := execOut(t, project, "a", "ls -a /tmp /var/tmp /dev/shm 2>/dev/null")
		if strings.Contains(left, ".rangekeeper-probe-") {
			t.Errorf("probe binary left behind:\n%s", left)
			return "binary left"
		}
		if e.running != 2 {
			t.Errorf("members not running: %+v", e)
		}
		return "clean (no binary left)"
	}
	return "FAILED"
}
