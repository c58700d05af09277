package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// Flags reach the command; a bad --since or output is bad input (exit 2) before any engine call.
func TestLogsFlags(t *testing.T) {
	var got *logsOptions
	f := newFactory(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	cmd := newLogsCmd(f, func(_ context.Context, o *logsOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"web-1", "--member", "db", "-f", "--since", "10m", "--tail", "50", "-t"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Sandbox != "web-1" || got.Member != "db" || !got.Follow || got.Since != "10m" || got.Tail != 50 || !got.Timestamps {
		t.Errorf("options: %+v", got)
	}
	for _, bad := range [][]string{{"x", "--since", "yesterday"}, {"x", "-o", "yaml"}, {"x", "--since", "-5m"}} {
		cmd := newLogsCmd(f, func(context.Context, *logsOptions) error { t.Fatal("ran with bad input"); return nil })
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs(bad)
		if err := cmd.Execute(); exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", bad, exitCode(err), err)
		}
	}
	if at, _ := parseSince("2026-12-03T16:00:00Z", time.Now()); !at.Equal(time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)) {
		t.Errorf("--since RFC 3339: %v", at)
	}
}

// `rangekeeper logs` prints every member's lines, each named by its service (stderr marked),
// or one member's alone; -o json gives one object a line with the stream.
func TestLogsCLIAgainstDocker(t *testing.T) {
	dockertest.Engine(t)
	project := "inspect-cli_logs-i" + dockertest.RunID
	dockertest.Project(t, project,
		dockertest.Service{Name: "default", Cmd: []string{"sh", "-c", "echo hello-out; echo hello-err >&2; sleep 3600"}},
		dockertest.Service{Name: "db", Cmd: []string{"sh", "-c", "echo db-ready; sleep 3600"}})
	state := filepath.Join(t.TempDir(), "state.db")
	var out string
	deadline := time.Now().Add(20 * time.Second)
	for {
		o, stderr, err := run(t, "", "--state", state, "logs", project)
		if err != nil {
			t.Fatalf("logs: %v\n%s", err, stderr)
		}
		out = o
		if strings.Count(out, "\n") >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, want := range []string{"default | hello-out", "default!| hello-err", "| db-ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs: missing %q in\n%s", want, out)
		}
	}
	out, _, err := run(t, "", "--state", state, "logs", project, "--member", "db", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var l backends.LogLine
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &l); err != nil || l.Text != "db-ready" || l.Member != "db" || l.Stream != "stdout" {
		t.Errorf("--member db -o json: %q (%v)", out, err)
	}
}
