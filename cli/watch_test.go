package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/spf13/cobra"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
	"github.com/rangekeeper/rangekeeper/state"
)

func quarantineCmd(f *factory, runF func(context.Context, *containOptions) error) *cobra.Command {
	return newContainCmd(f, "quarantine", runF)
}

func releaseCmd(f *factory, runF func(context.Context, *containOptions) error) *cobra.Command {
	return newContainCmd(f, "release", runF)
}

func TestWatchCommandsParseWithoutAnEngine(t *testing.T) {
	checkParses(t, []parseCase{
		{"alerts since yaml", func(t *testing.T) (any, error) {
			o, err := parse(t, newAlertsCmd, "--since", "90m", "-o", "yaml", "--open")
			return deref(o), err
		}, alertsOptions{Output: "yaml", Since: 90 * time.Minute, Open: true}, ""},
		{"alerts ack", func(t *testing.T) (any, error) {
			o, err := parse(t, newAlertsCmd, "--ack", "7", "-o", "json")
			return deref(o), err
		}, alertsOptions{Output: "json", Ack: 7}, ""},
		{"alerts bad output", func(t *testing.T) (any, error) {
			o, err := parse(t, newAlertsCmd, "-o", "xml")
			return deref(o), err
		}, alertsOptions{}, `--output "xml"`},
		{"alerts takes no sandbox", func(t *testing.T) (any, error) {
			o, err := parse(t, newAlertsCmd, "web")
			return deref(o), err
		}, alertsOptions{}, "unknown command"},
		{"quarantine", func(t *testing.T) (any, error) {
			o, err := parse(t, quarantineCmd, "web", "-y", "-o", "json")
			return deref(o), err
		}, containOptions{Verb: "quarantine", Sandbox: "web", Yes: true, Output: "json"}, ""},
		{"release", func(t *testing.T) (any, error) {
			o, err := parse(t, releaseCmd, "docker:default/web")
			return deref(o), err
		}, containOptions{Verb: "release", Sandbox: "docker:default/web", Output: "table"}, ""},
		{"quarantine needs one sandbox", func(t *testing.T) (any, error) {
			o, err := parse(t, quarantineCmd, "a", "b")
			return deref(o), err
		}, containOptions{}, "accepts 1 arg"},
	})
}

// `alerts -o json|yaml` lists what the watch stored; `--ack ID` acknowledges as the local
// operator and journals it; an unknown ID is bad input (exit 2).
func TestAlertsListsAndAcks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-3 * time.Hour).UTC()
	if _, err := db.AddAlerts([]state.Alert{
		{Time: old, SandboxID: "docker:default/old", Kind: state.AlertExec, Severity: catalog.SeverityLow, Summary: "exec ls as user 1000 in a (arguments not recorded)"},
		{SandboxID: "docker:default/web", Kind: state.AlertDrift, Severity: catalog.SeverityHigh, Rule: "CMP-N03", Summary: "new HIGH CMP-N03", Before: "(not in baseline)", After: "HIGH CMP-N03 on web-default-1"},
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, stderr, err := run(t, "", "--state", path, "alerts", "-o", "json", "--since", "1h")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var as []state.Alert
	if err := json.Unmarshal([]byte(out), &as); err != nil || len(as) != 1 || as[0].Rule != "CMP-N03" || as[0].After == "" {
		t.Fatalf("alerts --since 1h -o json: %v\n%s", err, out)
	}
	out, _, err = run(t, "", "--state", path, "alerts", "-o", "yaml")
	if err != nil || !strings.Contains(out, "rule: CMP-N03") || !strings.Contains(out, "severity: high") || !strings.Contains(out, "kind: exec") {
		t.Fatalf("alerts -o yaml: %v\n%s", err, out)
	}
	out, _, err = run(t, "", "--state", path, "alerts", "--ack", "2", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &as); err != nil || len(as) != 1 || as[0].Ack == nil || as[0].Ack.Operator != state.Operator() {
		t.Fatalf("ack output %s (%v)", out, err)
	}
	out, _, _ = run(t, "", "--state", path, "alerts", "--open", "-o", "json")
	if err := json.Unmarshal([]byte(out), &as); err != nil || len(as) != 1 || as[0].ID != 1 {
		t.Fatalf("open alerts after the ack: %s", out)
	}
	out, _, _ = run(t, "", "--state", path, "journal", "-o", "json")
	if !strings.Contains(out, `"action": "alert-ack"`) || !strings.Contains(out, `"target": "docker:default/web"`) {
		t.Errorf("ack not journaled:\n%s", out)
	}
	if _, _, err := run(t, "", "--state", path, "alerts", "--ack", "99"); exitCode(err) != 2 {
		t.Errorf("ack of an unknown alert: %v, want exit 2", err)
	}
}

// quarantine and release through the CLI on a real sandbox: refused read-only (exit 2, nothing
// changed), then the member leaves its non-internal network, a second quarantine is refused, and
// release puts it back with its alias.
func TestQuarantineReleaseCLI(t *testing.T) {
	cli := dockertest.Engine(t)
	project := "rk-qcli-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "default"})
	path := filepath.Join(t.TempDir(), "state.db")
	member, netName := project+"-default-1", project+"_default"
	onNet := func() bool {
		res, err := cli.ContainerInspect(context.Background(), member, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, ok := res.Container.NetworkSettings.Networks[netName]
		return ok
	}
	if _, _, err := run(t, "", "--state", path, "--read-only", "quarantine", project, "--yes"); exitCode(err) != 2 || !onNet() {
		t.Fatalf("read-only quarantine: %v (on network %v)", err, onNet())
	}
	out, stderr, err := run(t, "", "--state", path, "quarantine", project, "--yes", "-o", "json")
	if err != nil || !strings.Contains(out, `"ok": true`) {
		t.Fatalf("quarantine: %v\n%s%s", err, out, stderr)
	}
	if onNet() {
		t.Fatal("still on its non-internal network after quarantine")
	}
	res, _ := cli.ContainerInspect(context.Background(), member, client.ContainerInspectOptions{})
	if !res.Container.State.Running {
		t.Error("quarantine stopped the member")
	}
	if _, _, err := run(t, "", "--state", path, "quarantine", project, "--yes"); exitCode(err) != 2 {
		t.Errorf("second quarantine: %v, want refused (exit 2)", err)
	}
	if out, stderr, err = run(t, "", "--state", path, "release", project, "--yes"); err != nil {
		t.Fatalf("release: %v\n%s%s", err, out, stderr)
	}
	res, _ = cli.ContainerInspect(context.Background(), member, client.ContainerInspectOptions{})
	ep := res.Container.NetworkSettings.Networks[netName]
	if ep == nil || !contains(ep.Aliases, "default") {
		t.Fatalf("after release: endpoint %+v, want back on %s with alias default", ep, netName)
	}
	out, _, _ = run(t, "", "--state", path, "journal", "-o", "json")
	for _, want := range []string{`"action": "quarantine"`, `"action": "release"`, `"outcome": "refused"`} {
		if !strings.Contains(out, want) {
			t.Errorf("journal lacks %s", want)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
