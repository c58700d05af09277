package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// The real binary under tmux on a hardened sandbox (agent on an internal network only): `docker
// network connect` of an egress network onto the agent puts an alert line on the screen within
// 2 s (the time is logged: speed targets are benchmarks here, and this machine is shared), and
// the row is marked.
func TestNetworkConnectAlertOnScreen(t *testing.T) {
	tmux := need(t)
	cli := dockertest.Engine(t)
	ctx := context.Background()
	dir := t.TempDir()
	bin := buildWorkbench(t)
	project := "inspect-e2ew-i" + dockertest.RunID
	egress := hardenedWithEgress(t, cli, project)

	p := startWorkbench(t, tmux, "rk-e2ew-"+dockertest.RunID, bin, dir, 160, 40)
	p.wait(project, 30*time.Second)
	p.keys("/")
	p.literal("name=" + project)
	p.keys("Enter")
	time.Sleep(time.Second) // the watch records the sandbox's baseline at its first sight

	start := time.Now()
	if _, err := cli.NetworkConnect(ctx, egress, client.NetworkConnectOptions{Container: project + "-default-1"}); err != nil {
		t.Fatal(err)
	}
	// Other tests share this engine (and exec into their sandboxes): wait for our row's mark.
	s := p.waitRe(regexp.MustCompile(`(?m)^\s*!\+docker:\S+\s+`+regexp.QuoteMeta(project)), 10*time.Second)
	t.Logf("row marked on screen %s after the connect", time.Since(start))
	if !strings.Contains(s, "ALERT") {
		t.Errorf("no alert line:\n%s", s)
	}
	p.keys(":")
	p.literal("alerts")
	p.keys("Enter")
	// The alerts screen's own title first: the fleet's alert line shows the same summary, and
	// an Escape sent before the screen opened would pair with the next key as alt+key.
	p.waitRe(regexp.MustCompile(`(?m)^alerts\s+\(`), 10*time.Second)
	p.wait("new HIGH CMP-N03", 10*time.Second)

	// The alert is in the state file: after the workbench quits (it holds the file's lock),
	// `alerts -o json` lists it with its evidence.
	p.keys("Escape")
	p.wait("sandboxes  sort:", 10*time.Second)
	p.keys("q")
	p.wait("rangekeeper exited 0", 20*time.Second)
	out, err := exec.Command(bin, "--state", stateIn(dir), "alerts", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("alerts -o json: %v\n%s", err, out)
	}
	var as []struct {
		Sandbox, Rule, After string
		Event                *struct{ Kind string }
	}
	if err := json.Unmarshal(out, &as); err != nil {
		t.Fatalf("alerts -o json is not JSON: %v\n%s", err, out)
	}
	found := false
	for _, a := range as {
		if a.Sandbox == "docker:default/"+project && a.Rule == "CMP-N03" && strings.Contains(a.After, egress) && a.Event != nil && a.Event.Kind == "network-connect" {
			found = true
		}
	}
	if !found {
		t.Errorf("alerts -o json lacks the connect alert:\n%s", out)
	}
}

// hardenedWithEgress starts project as a hardened sandbox, its agent (service default) on an
// internal network only, and creates a routed network beside it that a test connects to the
// agent; it returns that network's name. Both are removed when the test ends.
func hardenedWithEgress(t *testing.T, cli *client.Client, project string) (egress string) {
	t.Helper()
	ctx := context.Background()
	dockertest.Project(t, project)
	inner := project + "_inner"
	if _, err := cli.NetworkCreate(ctx, inner, client.NetworkCreateOptions{Driver: "bridge", Internal: true, Labels: dockertest.Labels(map[string]string{
		"com.docker.compose.project": project, "com.docker.compose.network": "inner"})}); err != nil {
		t.Fatal(err)
	}
	dockertest.StartService(t, project, inner, dockertest.Image(t), dockertest.Service{Name: "default"})
	egress = project + "-egress"
	if _, err := cli.NetworkCreate(ctx, egress, client.NetworkCreateOptions{Driver: "bridge", Labels: dockertest.Labels(nil)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cli.NetworkRemove(context.Background(), egress, client.NetworkRemoveOptions{}) })
	return egress
}
