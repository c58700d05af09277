package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// TestMain removes the binaries the crash and hang-up tests built (built once, shared).
func TestMain(m *testing.M) {
	dockertest.Main(m, func() {
		if crashDir != "" {
			os.RemoveAll(crashDir)
		}
	})
}

// run executes the CLI in-process with its own factory and returns stdout, stderr and the error.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := newFactory(strings.NewReader(stdin), &out, &errOut)
	root := newRootCmd(f)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	f.closeAll()
	return out.String(), errOut.String(), err
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return 2
	}
	return 0
}

func TestLsJSONListsComposeSandboxes(t *testing.T) {
	dockertest.Engine(t)
	project := "inspect-cli_ls-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"}, dockertest.Service{Name: "db"})
	state := filepath.Join(t.TempDir(), "state.db")
	out, stderr, err := run(t, "", "--state", state, "ls", "--output", "json", "--backend", "docker")
	if err != nil {
		t.Fatalf("ls: %v\n%s", err, stderr)
	}
	var res lsResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("ls -o json is not JSON: %v\n%s", err, out)
	}
	found := false
	for _, s := range res.Sandboxes {
		if s.Name == project {
			found = true
			if len(s.Members) != 2 || s.Task != "cli_ls" || !s.Inspect {
				t.Errorf("sandbox = %+v", s)
			}
		}
	}
	if !found {
		t.Fatalf("project %s missing from ls output", project)
	}
	if len(res.Backends) == 0 || res.Backends[0].State != "connected" {
		t.Errorf("backends health = %+v", res.Backends)
	}
}

func TestDestructiveCommandsRefuseToPromptWithoutATerminal(t *testing.T) {
	dockertest.Engine(t)
	project := "inspect-cli_td-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	state := filepath.Join(t.TempDir(), "state.db")
	_, _, err := run(t, project+"\n", "--state", state, "teardown", project)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("teardown without a terminal = %v; want exit 2 asking for --yes", err)
	}
	// Read-only mode refuses even with --yes, and the journal says so.
	_, _, err = run(t, "", "--state", state, "--read-only", "teardown", "--yes", project)
	if exitCode(err) != 2 {
		t.Fatalf("read-only teardown = %v; want exit 2 like every refusal", err)
	}
	out, _, err := run(t, "", "--state", state, "journal", "-o", "json")
	if err != nil || !strings.Contains(out, `"outcome": "refused"`) || !strings.Contains(out, "read-only") {
		t.Fatalf("journal after a refused teardown = %v\n%s", err, out)
	}
	// The sandbox is still there.
	out, _, _ = run(t, "", "--state", state, "ls", "-o", "json")
	if !strings.Contains(out, project) {
		t.Fatal("read-only teardown removed the sandbox")
	}
}

func TestUnknownSandboxAndBadOutputAreClearErrors(t *testing.T) {
	dockertest.Engine(t)
	state := filepath.Join(t.TempDir(), "state.db")
	_, _, err := run(t, "", "--state", state, "snapshot", "no-such-sandbox")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "no-such-sandbox") {
		t.Fatalf("snapshot of unknown = %v", err)
	}
	_, _, err = run(t, "", "--state", state, "ls", "-o", "xml") // yaml is an output, xml is not
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "xml") {
		t.Fatalf("ls -o xml = %v", err)
	}
}

func TestDemoWithoutDockerSaysWhatIsMissing(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "absent.sock"))
	_, _, err := run(t, "", "--state", filepath.Join(t.TempDir(), "s.db"), "demo", "--no-tui")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "Docker Engine") {
		t.Fatalf("demo without docker = %v; want exit 2 naming the Docker Engine", err)
	}
}

func TestBadConfigNamesFileAndLine(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfg, "read_only: true\ncolour: blue\n")
	_, _, err := run(t, "", "--config", cfg, "--state", filepath.Join(t.TempDir(), "s.db"), "ls")
	if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad config = %v; want file and line", err)
	}
}

// TestSnapshotNameIsAcceptedEverywhere is the bug found by use: a snapshot taken with --name
// must be accepted by that name by revert and snapshots rm; a name that names nothing says which
// thing was not found; deleting a snapshot is confirmed and journaled as its own action.
func TestSnapshotNameIsAcceptedEverywhere(t *testing.T) {
	cli := dockertest.Engine(t)
	project := "inspect-cli_snap-i" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	t.Cleanup(func() {
		imgs, _ := cli.ImageList(context.Background(), client.ImageListOptions{Filters: make(client.Filters).Add("label", docker.LabelSnapshotSandbox+"=docker:default/"+project)})
		for _, im := range imgs.Items {
			_, _ = cli.ImageRemove(context.Background(), im.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true})
		}
	})
	state := filepath.Join(t.TempDir(), "state.db")
	out, stderr, err := run(t, "", "--state", state, "snapshot", project, "--name", "s1")
	if err != nil || !strings.Contains(out, "snapshot s1 (") {
		t.Fatalf("snapshot --name s1 = %v\n%s%s", err, out, stderr)
	}
	if out, stderr, err := run(t, "", "--state", state, "snapshot", project, "--name", "s2"); err != nil {
		t.Fatalf("snapshot --name s2 = %v\n%s%s", err, out, stderr)
	}
	out, stderr, err = run(t, "", "--state", state, "revert", project, "s1", "--yes")
	if err != nil || !strings.Contains(out, project+" reverted to s1 (") {
		t.Fatalf("revert by name = %v\n%s%s", err, out, stderr)
	}
	_, _, err = run(t, "", "--state", state, "revert", project, "nope", "--yes")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), `snapshot not found: `+project+` has no snapshot with ID or name "nope"`) {
		t.Fatalf("revert to an unknown snapshot = %v; want exit 2 naming the snapshot, not the sandbox", err)
	}
	// s1's images now run the sandbox; s2 is the one that can go.
	_, _, err = run(t, "s2\n", "--state", state, "snapshots", "rm", project, "s2")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("snapshots rm without a terminal = %v; want a refusal asking for --yes", err)
	}
	out, stderr, err = run(t, "", "--state", state, "snapshots", "rm", project, "s2", "--yes")
	if err != nil || !strings.Contains(out, "snapshot s2 (") || !strings.Contains(out, "deleted") {
		t.Fatalf("snapshots rm by name = %v\n%s%s", err, out, stderr)
	}
	out, _, _ = run(t, "", "--state", state, "snapshots", "ls", project, "-o", "json")
	if strings.Contains(out, `"name": "s2"`) || !strings.Contains(out, `"name": "s1"`) {
		t.Errorf("snapshots after rm = %s; want s1 only", out)
	}
	out, _, err = run(t, "", "--state", state, "journal", "-o", "json")
	if err != nil || !strings.Contains(out, `"action": "snapshot-rm"`) || !strings.Contains(out, `"name": "s2"`) {
		t.Errorf("journal lacks the deletion as its own action:\n%s", out)
	}
}
