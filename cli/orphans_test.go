package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/state"
)

func TestSnapshotsOfASandboxRemovedBehindOurBackAreListedAndPruned(t *testing.T) {
	cli := dockertest.Engine(t)
	project := "rk-orphan-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"}, dockertest.Service{Name: "db"})
	t.Cleanup(func() { removeSnapshotImagesOf(cli, project) })
	st := filepath.Join(t.TempDir(), "state.db")
	id := "docker:default/" + project
	if _, stderr, err := run(t, "", "--state", st, "snapshot", id, "--name", "keep-me"); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, stderr)
	}
	if out, _, _ := run(t, "", "--state", st, "snapshots", "ls", "--orphans"); strings.Contains(out, project) {
		t.Fatalf("a live sandbox's snapshot listed as orphaned:\n%s", out)
	}
	dockertest.RemoveProject(cli, project) // compose down, Inspect's cleanup: rangekeeper is not told

	out, stderr, err := run(t, "", "--state", st, "snapshots", "ls", "--orphans", "-o", "json")
	if err != nil {
		t.Fatalf("ls --orphans: %v\n%s", err, stderr)
	}
	var orphans []action.Orphan
	if err := json.Unmarshal([]byte(out), &orphans); err != nil || len(orphans) != 1 || orphans[0].SandboxID != id || orphans[0].Bytes <= 0 {
		t.Fatalf("orphans = %+v (%v)\n%s", orphans, err, out)
	}
	table, _, _ := run(t, "", "--state", st, "snapshots", "ls", "--orphans")
	if !strings.Contains(table, "keep-me") || !strings.Contains(table, "SIZE") {
		t.Errorf("orphan table:\n%s", table)
	}
	if out, _, err := run(t, "", "--state", st, "snapshots", "ls", id); err != nil || !strings.Contains(out, "keep-me") {
		t.Errorf("snapshots ls of the gone sandbox: %v\n%s", err, out)
	}
	if _, _, err := run(t, "", "--state", st, "snapshots", "prune"); exitCode(err) != 2 {
		t.Fatalf("prune without a terminal or --yes: exit %d", exitCode(err))
	}
	if _, _, err := run(t, "", "--state", st, "snapshots", "prune", "--older-than", "24h", "--yes"); err != nil {
		t.Fatalf("prune --older-than 24h: %v", err)
	}
	if out, _, _ := run(t, "", "--state", st, "snapshots", "ls", "--orphans", "-o", "json"); !strings.Contains(out, orphans[0].ID) {
		t.Fatalf("--older-than 24h pruned a fresh snapshot:\n%s", out)
	}
	if out, stderr, err := run(t, "", "--state", st, "snapshots", "prune", "--yes"); err != nil || !strings.Contains(out, "pruned 1") {
		t.Fatalf("prune: %v\n%s%s", err, out, stderr)
	}
	imgs, err := cli.ImageList(context.Background(), client.ImageListOptions{All: true, Filters: make(client.Filters).Add("label", docker.LabelSnapshotSandbox+"="+id)})
	if err != nil || len(imgs.Items) != 0 {
		t.Errorf("images left: %d (%v)", len(imgs.Items), err)
	}
	if ents, _ := os.ReadDir(filepath.Join(filepath.Dir(st), "snapshots")); len(ents) != 0 {
		t.Errorf("archives left: %v", ents)
	}
	db, err := state.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, _ := db.Snapshots("")
	es, _ := db.Journal(state.JournalQuery{})
	pruned := false
	for _, e := range es {
		pruned = pruned || e.Action == "snapshot-rm" && e.Phase == state.PhaseOutcome && e.Outcome == state.OutcomeOK
	}
	if len(recs) != 0 || !pruned {
		t.Errorf("records left %d, pruning journaled %v", len(recs), pruned)
	}
}

func TestReadOnlyTeardownExitsTwoLikeEveryRefusal(t *testing.T) {
	dockertest.Engine(t)
	project := "rk-ro-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	st := filepath.Join(t.TempDir(), "state.db")
	_, stderr, err := run(t, "", "--state", st, "--read-only", "teardown", "--yes", project)
	if exitCode(err) != 2 || !strings.Contains(stderr, "read-only") {
		t.Fatalf("read-only teardown: exit %d\n%s", exitCode(err), stderr)
	}
}

func TestUnknownKeyBindingIsRefusedAtLoadWithFileAndLine(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfg, "theme: dark\nkeys:\n  snapshot: S\n  snapshoot: X\n")
	_, _, err := run(t, "", "--config", cfg, "snapshots", "ls", "x")
	if err == nil || !strings.Contains(err.Error(), cfg+":4") || !strings.Contains(err.Error(), "snapshoot") {
		t.Fatalf("err = %v", err)
	}
}
